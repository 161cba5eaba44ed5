//! The project's `.agent-guard/` directory: created with a `.gitignore`, so nothing agent-guard keeps there (the
//! audit log with file contents, saved answers, tool output) is ever committed by accident.

use std::io;
use std::path::Path;

/// The directory agent-guard keeps its state in, in a project (and in a home directory).
pub const STATE_DIR: &str = ".agent-guard";

/// The `.gitignore` written into a `.agent-guard` directory agent-guard creates: everything in it is ignored.
pub(crate) const STATE_DIR_GITIGNORE: &str = "# Written by agent-guard when it made this directory: the audit log, saved answers and tool output\n\
# stay out of git. To share a settings file here, add it with `git add -f`, or add a line `!settings.json`.\n\
*\n";

/// Creates `dir` and its missing parents like [`std::fs::create_dir_all`]; every directory named `.agent-guard`
/// among those it creates gets a `.gitignore` of `*`. A `.agent-guard` that existed
/// before is left as the user keeps it. Processes creating the same directory at once write the file once.
///
/// ```
/// let project = tempfile::tempdir().unwrap();
/// agent_hooks::create_dir_all_ignored(&project.path().join(".agent-guard/library")).unwrap();
/// let ignore = std::fs::read_to_string(project.path().join(".agent-guard/.gitignore")).unwrap();
/// assert!(ignore.lines().any(|line| line == "*"));
/// ```
pub fn create_dir_all_ignored(dir: &Path) -> io::Result<()> {
    let created: Vec<&Path> = dir
        .ancestors()
        .take_while(|ancestor| !ancestor.as_os_str().is_empty() && !ancestor.exists())
        .filter(|ancestor| ancestor.file_name().is_some_and(|name| name == STATE_DIR))
        .collect();
    std::fs::create_dir_all(dir)?;
    for state in created {
        write_gitignore(state)?;
    }
    Ok(())
}

/// Writes the `.gitignore` of a `.agent-guard` directory unless one is there (another process may have written
/// it a moment ago).
fn write_gitignore(state: &Path) -> io::Result<()> {
    use std::io::Write as _;
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(state.join(".gitignore"))
    {
        Ok(mut file) => file.write_all(STATE_DIR_GITIGNORE.as_bytes()),
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(error) => Err(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_state_directory_it_creates_gets_the_file() {
        let root = tempfile::tempdir().unwrap();
        let fresh = root.path().join("a/.agent-guard/library/x");
        create_dir_all_ignored(&fresh).unwrap();
        assert!(fresh.is_dir());
        assert_eq!(
            std::fs::read_to_string(root.path().join("a/.agent-guard/.gitignore")).unwrap(),
            STATE_DIR_GITIGNORE
        );
        assert!(!root.path().join("a/.agent-guard/library/.gitignore").exists());

        // The user's own `.agent-guard` keeps what they made of it.
        let own = root.path().join("b/.agent-guard");
        std::fs::create_dir_all(&own).unwrap();
        create_dir_all_ignored(&own.join("library")).unwrap();
        assert!(!own.join(".gitignore").exists());

        // An existing directory is no error.
        create_dir_all_ignored(root.path()).unwrap();
    }

    #[test]
    fn git_ignores_everything_in_it() {
        assert!(STATE_DIR_GITIGNORE.lines().any(|line| line == "*"));
        assert!(
            STATE_DIR_GITIGNORE
                .lines()
                .all(|line| line == "*" || line.starts_with('#')),
            "nothing is taken back from the ignore by default"
        );
    }
}
