//! End-to-end tests of the built binary in a subdirectory of a project: the project's settings apply and its files
//! are inside the roots, for the hook, `--jsonl`, `explain`, `rules` and `doctor` alike.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

mod hook;
#[path = "../../../tests/support/need.rs"]
mod need;

use std::path::PathBuf;
use std::process::Output;

use hook::{decision, input, text};
use serde_json::{Value, json};

/// A scratch home and project: `proj/.git`, `proj/.claude/settings.json` with two deny rules, `proj/README.md`,
/// `proj/secrets/key`, and the subdirectory `proj/src` the agent moved to. The home has settings of its own
/// (`~/.claude`), like every user of the coding agent.
struct Scratch {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    proj: PathBuf,
}

impl Scratch {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let home = root.join("home");
        let proj = root.join("proj");
        for dir in [
            home.join(".claude"),
            home.join("notes"),
            proj.join(".git"),
            proj.join(".claude"),
            proj.join("src"),
            proj.join("secrets"),
        ] {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(home.join(".claude/settings.json"), r#"{"permissions":{}}"#).unwrap();
        std::fs::write(home.join("diary.txt"), "x").unwrap();
        std::fs::write(
            proj.join(".claude/settings.json"),
            r#"{"permissions":{"deny":["Read(/secrets/**)","Bash(make deploy:*)"]}}"#,
        )
        .unwrap();
        std::fs::write(proj.join("README.md"), "# proj").unwrap();
        std::fs::write(proj.join("secrets/key"), "k").unwrap();
        Self {
            _tmp: tmp,
            home,
            proj,
        }
    }

    fn src(&self) -> PathBuf {
        self.proj.join("src")
    }

    /// Runs the binary in the project with `args` and `stdin`, the scratch home and no inherited `AGENT_*` variables.
    fn run(&self, args: &[&str], stdin: &str) -> Output {
        hook::run(args, stdin, &self.proj, &self.home)
    }
}

/// The calls of a `cd src` session and what each must get: the project's files are inside the roots, and the
/// deny rules of the project's settings apply from the subdirectory.
fn session(scratch: &Scratch) -> Vec<(String, &'static str, &'static str)> {
    let src = scratch.src();
    vec![
        (
            input(&src, "Read", json!({"file_path": "../README.md"})),
            "allow",
            "inside the roots",
        ),
        (
            input(&src, "Bash", json!({"command": "cat ../README.md"})),
            "allow",
            "read-only",
        ),
        (
            input(&src, "Read", json!({"file_path": "../secrets/key"})),
            "deny",
            "deny rule `Read(/secrets/**)` from project settings",
        ),
        (
            input(&src, "Bash", json!({"command": "make deploy"})),
            "deny",
            "deny rule `Bash(make deploy:*)` from project settings",
        ),
        // A write inside the project asks as any edit does; it is not outside the roots.
        (
            input(
                &src,
                "Write",
                json!({"file_path": "../notes.txt", "content": "x"}),
            ),
            "ask",
            "",
        ),
        // The home directory stays outside.
        (
            input(&src, "Read", json!({"file_path": scratch.home.join("diary.txt")})),
            "deny",
            "outside the allowed roots",
        ),
    ]
}

#[test]
fn the_hook_in_a_subdirectory_works_in_the_project() {
    let scratch = Scratch::new();
    for (line, want, why) in session(&scratch) {
        let out = scratch.run(&["check"], &line);
        assert!(out.status.success(), "{line}: {}", text(&out.stderr));
        let (got, reason) = decision(text(&out.stdout).trim());
        assert_eq!(got, want, "{line}: {reason}");
        assert!(reason.contains(why), "{line}: {reason}");
        assert!(!reason.contains("outside") || want == "deny", "{line}: {reason}");
    }
}

#[test]
fn jsonl_and_explain_in_a_subdirectory_work_in_the_project() {
    let scratch = Scratch::new();
    let calls = session(&scratch);
    let lines: Vec<&str> = calls.iter().map(|(line, _, _)| line.as_str()).collect();
    let out = scratch.run(&["check", "--jsonl"], &(lines.join("\n") + "\n"));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let got: Vec<(String, String)> = stdout.lines().map(decision).collect();
    assert_eq!(got.len(), calls.len(), "{stdout}");
    for ((decision, reason), (line, want, why)) in got.iter().zip(&calls) {
        assert_eq!(decision, want, "{line}: {reason}");
        assert!(reason.contains(why), "{line}: {reason}");
    }

    let out = scratch.run(&["explain"], &calls[2].0);
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("Read(/secrets/**)") && stdout.contains("decision: DENY"),
        "{stdout}{}",
        text(&out.stderr)
    );
}

#[test]
fn rules_and_doctor_show_the_project_of_a_subdirectory() {
    let scratch = Scratch::new();
    let src = scratch.src();
    let out = scratch.run(&["rules", "--cwd", src.to_str().unwrap()], "");
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains(&format!("working directory: {}\n", src.display())),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("project: {}\n", scratch.proj.display())),
        "{stdout}"
    );
    let settings = scratch.proj.join(".claude/settings.json");
    assert!(
        stdout.contains(&format!("  project {}\n", settings.display())),
        "{stdout}"
    );
    assert!(stdout.contains("deny  project  Read(/secrets/**)"), "{stdout}");
    let roots = stdout.split("\nroots:\n").nth(1).unwrap();
    assert!(roots.contains(&format!("{}\n", src.display())), "{stdout}");
    assert!(
        roots.contains(&format!("project    {}\n", scratch.proj.display())),
        "{stdout}"
    );

    // A relative `--cwd` finds the same project.
    let out = scratch.run(&["rules", "--cwd", "src"], "");
    assert!(
        text(&out.stdout).contains(&format!("project: {}\n", scratch.proj.display())),
        "{}",
        text(&out.stdout)
    );

    let out = scratch.run(&["doctor", "--cwd", src.to_str().unwrap()], "");
    let stdout = text(&out.stdout);
    assert!(
        stdout.starts_with(&format!(
            "agent-guard doctor, project `{}`",
            scratch.proj.display()
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("`{}` (project): valid", settings.display())),
        "{stdout}"
    );
}

/// The user's own `~/.claude` (the coding agent's settings folder) does not make the home a project: a directory
/// below it is its own project, and the rest of the home stays outside the roots.
#[test]
fn the_home_directory_is_not_a_project_because_of_its_settings() {
    let scratch = Scratch::new();
    let notes = scratch.home.join("notes");
    let out = scratch.run(&["rules", "--cwd", notes.to_str().unwrap()], "");
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(&format!("project: {}\n", notes.display())),
        "{stdout}"
    );
    assert!(!stdout.contains("project    "), "{stdout}");
    let out = scratch.run(
        &["check"],
        &input(&notes, "Read", json!({"file_path": "../diary.txt"})),
    );
    let (got, reason) = decision(text(&out.stdout).trim());
    assert_eq!(got, "deny", "{reason}");
    assert!(reason.contains("outside the allowed roots"), "{reason}");
}

/// The project's own protected paths stay protected from a subdirectory: the wider root gives edits of the
/// project's files, not of its `.git/` or its settings.
#[test]
fn protected_paths_of_the_project_hold_from_a_subdirectory() {
    let scratch = Scratch::new();
    let src = scratch.src();
    for (file, want, why) in [
        ("../notes.txt", "allow", "inside the roots"),
        ("../.claude/settings.json", "ask", "protected path"),
        ("../.git/config", "ask", "protected path"),
    ] {
        let mut value: Value =
            serde_json::from_str(&input(&src, "Write", json!({"file_path": file, "content": "x"}))).unwrap();
        value["permission_mode"] = json!("acceptEdits");
        let out = scratch.run(&["check"], &value.to_string());
        let (got, reason) = decision(text(&out.stdout).trim());
        assert_eq!(got, want, "{file}: {reason}");
        assert!(reason.contains(why), "{file}: {reason}");
    }
}

/// `install` from a subdirectory writes the project's settings, where `check` finds them from the subdirectory; a
/// `.claude/` in the subdirectory would make it a project of its own and leave the project's settings behind.
#[test]
fn install_from_a_subdirectory_writes_the_projects_settings() {
    let scratch = Scratch::new();
    let src = scratch.src();
    let out = scratch.run(
        &["install", "--scope", "local", "--cwd", src.to_str().unwrap()],
        "",
    );
    assert!(out.status.success(), "{}{}", text(&out.stdout), text(&out.stderr));
    let local = scratch.proj.join(".claude/settings.local.json");
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&local).unwrap()).unwrap();
    assert!(written["hooks"]["PreToolUse"].is_array(), "{written}");
    assert!(!src.join(".claude").exists());
}

/// A coding agent that `cd`s into a nested package with a `.claude` of its own still works in the project it was
/// started in when it declares that project (Claude Code's `CLAUDE_PROJECT_DIR`): the project's files are inside the
/// roots for the decision and, through the wrapping's `--project`, for the sandbox that runs the allowed line.
#[test]
fn a_declared_project_keeps_a_nested_package_in_the_project() {
    let scratch = Scratch::new();
    let pkg = scratch.proj.join("packages/web");
    std::fs::create_dir_all(pkg.join(".claude")).unwrap();
    std::fs::create_dir_all(pkg.join("src")).unwrap();
    let cwd = pkg.join("src");
    let proj = scratch.proj.to_str().unwrap();
    let read = input(&cwd, "Read", json!({"file_path": "../../../README.md"}));
    let cat = input(&cwd, "Bash", json!({"command": "cat ../../../README.md"}));
    let check = |line: &str, env: &[(&str, &str)]| {
        let out = hook::run_with(&["check"], line, &cwd, &scratch.home, env);
        assert!(out.status.success(), "{line}: {}", text(&out.stderr));
        serde_json::from_str::<Value>(text(&out.stdout).trim()).unwrap()
    };
    // Without the declaration the nested package is the project, and the outer files are outside it.
    let (got, reason) = decision(&check(&read, &[]).to_string());
    assert_eq!(got, "deny", "{reason}");
    // Declared: inside the roots, for the decision and for the sandbox the allowed line runs in.
    let declared = [("CLAUDE_PROJECT_DIR", proj)];
    let (got, reason) = decision(&check(&read, &declared).to_string());
    assert_eq!(got, "allow", "{reason}");
    let answer = check(&cat, &declared);
    let (got, reason) = decision(&answer.to_string());
    assert_eq!(got, "allow", "{reason}");
    // The nested package's own rules still hold there, anchored at the package.
    std::fs::create_dir_all(pkg.join("private")).unwrap();
    std::fs::write(pkg.join("private/notes.txt"), "n").unwrap();
    std::fs::write(
        pkg.join(".claude/settings.json"),
        r#"{"permissions":{"deny":["Read(/private/**)"]}}"#,
    )
    .unwrap();
    let private = input(&cwd, "Read", json!({"file_path": "../private/notes.txt"}));
    let (got, reason) = decision(&check(&private, &declared).to_string());
    assert_eq!(got, "deny", "{reason}");
    assert!(reason.contains("Read(/private/**)"), "{reason}");
    // Gemini CLI's name for it counts the same.
    let (got, reason) = decision(&check(&read, &[("GEMINI_PROJECT_DIR", proj)]).to_string());
    assert_eq!(got, "allow", "{reason}");
    // The home directory declared as the project widens nothing.
    let home = scratch.home.to_str().unwrap();
    let (got, reason) = decision(&check(&read, &[("CLAUDE_PROJECT_DIR", home)]).to_string());
    assert_eq!(got, "deny", "{reason}");
    let Some(updated) = answer["hookSpecificOutput"]["updatedInput"]["command"].as_str() else {
        // Without a kernel that enforces the sandbox an allowed line is not wrapped; nothing more to run.
        assert!(!need::SANDBOX.met(need::sandbox_probe(env!("CARGO_BIN_EXE_agent-guard")).1));
        return;
    };
    assert!(updated.contains(&format!(" --project '{proj}'")), "{updated}");
    let ran = std::process::Command::new("bash")
        .args(["-c", updated])
        .current_dir(&cwd)
        .env("HOME", &scratch.home)
        .env_remove("CLAUDE_PROJECT_DIR")
        .output()
        .unwrap();
    assert!(ran.status.success(), "{updated}: {}", text(&ran.stderr));
    assert_eq!(text(&ran.stdout), "# proj");
}

/// A working directory a link leads out of where it is written to be (`proj/hl` made by `ln -s ~ hl`, then `cd hl`)
/// is no root: its resolved place would be granted whole. No call is decided there; a link that stays in the
/// project is a working directory like any other.
#[test]
fn a_working_directory_that_links_out_of_the_project_decides_nothing() {
    let scratch = Scratch::new();
    std::os::unix::fs::symlink(&scratch.home, scratch.proj.join("hl")).unwrap();
    std::os::unix::fs::symlink(scratch.src(), scratch.proj.join("alias")).unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), scratch.proj.join("elsewhere")).unwrap();
    // Another project, with a `.git` of its own: the working directory would be its own project.
    std::fs::create_dir_all(outside.path().join("other/.git")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("other"), scratch.proj.join("other")).unwrap();
    // The same link behind a directory open to every user, which stops the search for a marked project.
    let open = scratch.proj.join("open");
    std::fs::create_dir_all(&open).unwrap();
    std::fs::set_permissions(&open, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    std::os::unix::fs::symlink(outside.path().join("other"), open.join("o")).unwrap();
    let proj = scratch.proj.to_str().unwrap();
    for declared in [&[][..], &[("CLAUDE_PROJECT_DIR", proj)][..]] {
        for (cwd, want) in [
            ("hl", "deny"),
            ("elsewhere", "deny"),
            ("other", "deny"),
            ("alias", "allow"),
            ("src", "allow"),
        ] {
            let cwd = scratch.proj.join(cwd);
            let line = input(
                &cwd,
                "Bash",
                json!({"command": "cat notes.txt diary.txt 2>/dev/null; ls"}),
            );
            let out = hook::run_with(&["check"], &line, &scratch.proj, &scratch.home, declared);
            let (got, reason) = decision(text(&out.stdout).trim());
            assert_eq!(got, want, "{} {declared:?}: {reason}", cwd.display());
            if want == "deny" {
                assert!(reason.contains("leads through a link"), "{reason}");
            }
        }
    }
    // Behind the open directory: denied where the session declared its project (the search passes the open
    // directory up to it).
    let line = input(&open.join("o"), "Bash", json!({"command": "ls"}));
    let declared = [("CLAUDE_PROJECT_DIR", proj)];
    let out = hook::run_with(&["check"], &line, &scratch.proj, &scratch.home, &declared);
    let (got, reason) = decision(text(&out.stdout).trim());
    assert_eq!(got, "deny", "{reason}");
}
