//! Files an interpreter runs by itself at a later start, outside any sandbox: what Python's `site` module executes at
//! every start of an interpreter (`*.pth` in a site-packages, `sitecustomize.py`, `usercustomize.py`), what makes an
//! environment (`pyvenv.cfg`, a virtual environment's `bin/activate*` and programs), the configuration pip reads in
//! one (`pip.conf`, `pip.ini`), and compiled bytecode (`*.pyc`), which Python may load instead of the reviewed
//! source. The user's python, pip, editor and shell run them later, where no sandbox is. A package manager writing
//! them (`pip install`, `uv sync`, `python -m venv`) is legitimate and stays contained: only a file the call names as
//! one it writes (a redirection, a write operand or option, the Write and Edit tools) is judged here.

use std::ffi::OsStr;
use std::path::{Component, Path};

use agent_bash_guard::StartFile;
use agent_fs_sandbox::PathCheck;

/// The directories whose `*.pth` files Python's `site` module reads at every start (PEP 582's `__pypackages__`,
/// which PDM adds as a site directory, among them).
const SITE_DIRS: [&str; 3] = ["site-packages", "dist-packages", "__pypackages__"];

/// Why a write to the file `check` names makes code an interpreter runs later by itself, outside the sandbox.
pub(super) fn runs_later(check: &PathCheck) -> Option<String> {
    let written = check.resolved.as_deref().unwrap_or(&check.absolute);
    let name = written.file_name()?.to_string_lossy().into_owned();
    let kind = agent_bash_guard::start_file(&name).or_else(|| {
        // Any file of a virtual environment's `bin`: the programs its pip, python and scripts start.
        written
            .parent()
            .filter(|bin| is_bin(bin) && environment_of(bin))
            .map(|_| StartFile::Activation)
    })?;
    let placed = match kind {
        StartFile::PathConfiguration => {
            let dirs = written
                .parent()
                .into_iter()
                .flat_map(Path::components)
                .chain(check.absolute.parent().into_iter().flat_map(Path::components));
            let mut names = dirs.filter_map(|c| match c {
                Component::Normal(n) => Some(n.to_string_lossy().to_ascii_lowercase()),
                _ => None,
            });
            // A directory only known at run time (`> "$1/x.pth"`) may be any.
            check.input.contains(['$', '`']) || names.any(|d| SITE_DIRS.contains(&d.as_str()))
        }
        StartFile::Activation => written.parent().is_some_and(is_bin),
        StartFile::SiteModule
        | StartFile::Bytecode
        | StartFile::Environment
        | StartFile::PipConfiguration => true,
    };
    placed.then(|| {
        format!(
            "`{}`: {}, later, outside the sandbox",
            check.absolute.display(),
            kind.why()
        )
    })
}

/// Whether `dir` is named `bin` or `Scripts` (a virtual environment's programs on Windows).
fn is_bin(dir: &Path) -> bool {
    dir.file_name()
        .map(OsStr::to_string_lossy)
        .is_some_and(|name| name.eq_ignore_ascii_case("bin") || name.eq_ignore_ascii_case("scripts"))
}

/// Whether `bin`, a `bin` or `Scripts` directory, belongs to a Python virtual environment: `pyvenv.cfg` beside it.
fn environment_of(bin: &Path) -> bool {
    bin.parent()
        .is_some_and(|env| agent_fs_sandbox::is_file(&env.join("pyvenv.cfg")))
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use agent_tool_traits::{Decision, Layer, Provenance, Verdict};

    use super::*;

    fn check(input: &str) -> PathCheck {
        PathCheck {
            input: input.to_owned(),
            absolute: PathBuf::from("/p").join(input),
            resolved: None,
            root: Some(0),
            through_symlink: false,
            protected: None,
            verdict: Verdict::new(Decision::Allow, "", Provenance::layer(Layer::Sandbox)),
        }
    }

    #[test]
    fn start_up_files_of_an_interpreter_run_later() {
        for input in [
            ".venv/lib/python3.11/site-packages/x.pth",
            "venv/lib/python3.12/site-packages/evil.pth",
            ".tox/py311/lib/python3.11/site-packages/a.pth",
            "__pypackages__/3.11/lib/a.pth",
            ".direnv/python-3.11/lib/python3.11/site-packages/x.pth",
            "/usr/lib/python3/dist-packages/a.pth",
            "$(ls -d .venv/lib/python3*/site-packages)/x.pth",
            "$1/y.pth",
            ".venv/lib/python3.11/site-packages/sitecustomize.py",
            "lib/usercustomize.py",
            "src/__pycache__/util.cpython-311.pyc",
            "util.pyc",
            ".venv/pyvenv.cfg",
            ".venv/pip.conf",
            "venv/pip.ini",
            ".venv/bin/activate",
            ".venv/bin/activate.fish",
            "env/Scripts/Activate.ps1",
        ] {
            assert!(runs_later(&check(input)).is_some(), "{input}");
        }
    }

    #[test]
    fn other_files_do_not() {
        for input in [
            "models/best.pth",
            "checkpoint.pth.tar",
            "src/util.py",
            "src/__pycache__",
            "site-packages.txt",
            "bin/build.sh",
            "docs/activate.md",
            "requirements.txt",
        ] {
            assert!(runs_later(&check(input)).is_none(), "{input}");
        }
    }
}
