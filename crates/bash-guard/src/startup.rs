//! Files an interpreter runs by itself at a later start, by name: what Python's `site` module executes at every start
//! (`*.pth` in a site directory, `sitecustomize.py`, `usercustomize.py`), compiled bytecode Python may load instead of
//! the reviewed source (`*.pyc`), what makes a virtual environment (`pyvenv.cfg`) and starts it (`bin/activate*`), and
//! pip's configuration (`pip.conf`, `pip.ini`). The user's python, pip and shell run them later, outside any sandbox,
//! so a write a line makes to one is never contained. The caller that sees the disk decides the place: a `*.pth`
//! file counts in a site directory, an activation script in a `bin` or `Scripts` directory.

/// The kind of start-up file a name is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartFile {
    /// `*.pth`: its `import` lines run at every start, when it is in a site directory.
    PathConfiguration,
    /// `sitecustomize.py`, `usercustomize.py`: imported at every start from the path.
    SiteModule,
    /// `*.pyc`, `*.pyo`: loaded instead of the source, unchecked when its flags say so (PEP 552).
    Bytecode,
    /// `pyvenv.cfg`: names the interpreter an environment starts.
    Environment,
    /// `pip.conf`, `pip.ini`: the index pip installs from, whose packages' code runs.
    PipConfiguration,
    /// `activate`, `activate.fish`, `Activate.ps1`, `activate_this.py`: sourced by the user's shell, when in a
    /// `bin` or `Scripts` directory.
    Activation,
}

impl StartFile {
    /// What the file does later, for a reason.
    pub fn why(self) -> &'static str {
        match self {
            Self::PathConfiguration => {
                "Python runs the `import` lines of a `*.pth` file in a site-packages at every start of the interpreter"
            }
            Self::SiteModule => "Python imports it from its path at every start of the interpreter",
            Self::Bytecode => {
                "a compiled bytecode file, which Python may load instead of the reviewed source when it imports the \
                 module"
            }
            Self::Environment => {
                "it makes a Python environment, naming the interpreter every later run of it starts"
            }
            Self::PipConfiguration => {
                "pip's configuration (a virtual environment's `pip.conf` is read by every `pip` run in it) names the \
                 index it installs from, whose packages' code runs"
            }
            Self::Activation => "a virtual environment's activation script, which the user's shell runs",
        }
    }
}

/// The kind of start-up file the file name `name` is (its last component, any case).
pub fn start_file(name: &str) -> Option<StartFile> {
    let lower = name.to_ascii_lowercase();
    let kind = if lower.ends_with(".pth") && lower.len() > 4 {
        StartFile::PathConfiguration
    } else if matches!(lower.as_str(), "sitecustomize.py" | "usercustomize.py") {
        StartFile::SiteModule
    } else if (lower.ends_with(".pyc") || lower.ends_with(".pyo")) && lower.len() > 4 {
        StartFile::Bytecode
    } else if lower == "pyvenv.cfg" {
        StartFile::Environment
    } else if matches!(lower.as_str(), "pip.conf" | "pip.ini") {
        StartFile::PipConfiguration
    } else if lower == "activate" || lower.starts_with("activate.") || lower == "activate_this.py" {
        StartFile::Activation
    } else {
        return None;
    };
    Some(kind)
}

/// The start-up file a write target only known at run time ends in (`"$1/x.pth"`, `$(ls -d …)/sitecustomize.py`):
/// its last component written out, whatever the directory is.
pub(crate) fn unseen_target(text: &str) -> Option<StartFile> {
    let name = text.rsplit('/').next()?;
    if name.is_empty() || name.contains(['$', '`', '*', '?', '[', '{', '(', ')', '"', '\'']) {
        return None;
    }
    start_file(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(start_file("x.pth"), Some(StartFile::PathConfiguration));
        assert_eq!(start_file("SiteCustomize.py"), Some(StartFile::SiteModule));
        assert_eq!(start_file("util.cpython-311.pyc"), Some(StartFile::Bytecode));
        assert_eq!(start_file("pyvenv.cfg"), Some(StartFile::Environment));
        assert_eq!(start_file("pip.ini"), Some(StartFile::PipConfiguration));
        assert_eq!(start_file("Activate.ps1"), Some(StartFile::Activation));
        for other in [
            "util.py",
            ".pth",
            "model.pth.tar",
            "activation.py",
            "pip.txt",
            "cfg",
        ] {
            assert_eq!(start_file(other), None, "{other}");
        }
    }

    #[test]
    fn unseen_targets() {
        assert_eq!(unseen_target("$1/y.pth"), Some(StartFile::PathConfiguration));
        assert_eq!(
            unseen_target("$(ls -d .venv/lib/python3*/site-packages)/sitecustomize.py"),
            Some(StartFile::SiteModule)
        );
        assert_eq!(unseen_target("$OUT"), None);
        assert_eq!(unseen_target("$dir/notes.txt"), None);
        assert_eq!(unseen_target("$dir/$name.pyc"), None);
    }
}
