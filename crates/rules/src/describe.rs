//! What a call touches, read from its JSON arguments: the command of a shell call, the files of a file tool, the
//! URL of a fetch, the type of a subagent. The argument names of both tool families are understood.

use serde_json::Value;

use crate::tool::{ToolKind, kind_of};
use agent_tool_traits::Access;

/// The subject of a call, before any layer analysed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallTarget<'a> {
    /// A shell command line.
    Shell(&'a str),
    /// Files read or written, as written in the arguments (relative, absolute or `~/…`).
    Files(Access, Vec<String>),
    /// A URL and its host, when it has one.
    Web {
        /// The URL as given.
        url: &'a str,
        /// Its host, lowercase, without a trailing dot.
        host: Option<String>,
    },
    /// A subagent of this type.
    Agent(Option<&'a str>),
    /// Nothing the rules can look into (the tool name is all there is).
    Opaque,
}

/// Reads the subject of a call of `tool` from `args`. An error names the missing or malformed argument.
pub fn describe<'a>(tool: &str, args: &'a Value) -> Result<CallTarget<'a>, String> {
    let kind = kind_of(tool);
    let str_arg = |keys: &[&str]| {
        keys.iter()
            .find_map(|k| args.get(*k))
            .map(|v| v.as_str().ok_or(v))
    };
    let required = |keys: &[&str]| match str_arg(keys) {
        Some(Ok(value)) => Ok(value),
        Some(Err(other)) => Err(format!(
            "argument `{}` must be a string, not `{other}`",
            keys.first().unwrap_or(&"")
        )),
        None => Err(format!("missing argument `{}`", keys.first().unwrap_or(&""))),
    };
    let optional = |keys: &[&str]| match str_arg(keys) {
        Some(Ok(value)) => Ok(Some(value)),
        Some(Err(other)) => Err(format!(
            "argument `{}` must be a string, not `{other}`",
            keys.first().unwrap_or(&"")
        )),
        None => Ok(None),
    };
    if !args.is_object() && kind != ToolKind::Other && kind != ToolKind::Mcp && kind != ToolKind::Harmless {
        return Err(format!("the arguments of `{tool}` must be a JSON object"));
    }
    let target = target(kind, required, optional)?;
    if let CallTarget::Files(_, paths) = &target {
        for path in paths {
            if let Some(why) = unexpanded(path) {
                return Err(why);
            }
        }
    }
    Ok(target)
}

/// Why a path given to a file tool is not what it looks like: a tool never expands it as a shell would, so
/// `$HOME/x`, `${HOME}/x`, `~root/x`, `~+/x` and `file:///x` name files literally called that, and a tool that
/// did expand them would reach somewhere else than the path shows.
fn unexpanded(path: &str) -> Option<String> {
    let chars: Vec<char> = path.chars().collect();
    for (i, c) in chars.iter().enumerate() {
        if *c == '$'
            && chars
                .get(i + 1)
                .is_some_and(|n| n.is_ascii_alphabetic() || matches!(n, '_' | '{' | '('))
        {
            return Some(format!(
                "the path `{path}` holds a shell expansion (`$…`), which the tool does not expand"
            ));
        }
    }
    if let Some(rest) = path.strip_prefix('~') {
        let (head, tail) = rest.split_once('/').map_or((rest, None), |(h, t)| (h, Some(t)));
        let stack =
            head.starts_with(['+', '-']) || (!head.is_empty() && head.chars().all(|c| c.is_ascii_digit()));
        if stack || (!head.is_empty() && tail.is_some()) {
            return Some(format!(
                "the path `{path}` starts with `~{head}`, another user's home or the shell's directory stack, which the tool does not expand"
            ));
        }
    }
    let scheme = path
        .split_once(':')
        .map(|(scheme, _)| scheme.to_ascii_lowercase());
    if scheme.as_deref() == Some("file") {
        return Some(format!("`{path}` is a `file:` URL, not a path"));
    }
    None
}

/// The subject of a call of a known kind.
fn target<'a>(
    kind: ToolKind,
    required: impl Fn(&[&str]) -> Result<&'a str, String>,
    optional: impl Fn(&[&str]) -> Result<Option<&'a str>, String>,
) -> Result<CallTarget<'a>, String> {
    Ok(match kind {
        ToolKind::Shell => CallTarget::Shell(required(&["command"])?),
        ToolKind::Read => CallTarget::Files(
            Access::Read,
            vec![required(&["file_path", "path", "notebook_path"])?.to_owned()],
        ),
        ToolKind::Write | ToolKind::Edit => {
            CallTarget::Files(Access::Write, vec![required(&["file_path", "path"])?.to_owned()])
        }
        ToolKind::NotebookEdit => CallTarget::Files(
            Access::Write,
            vec![required(&["notebook_path", "file_path"])?.to_owned()],
        ),
        ToolKind::Grep => {
            CallTarget::Files(Access::Read, vec![optional(&["path"])?.unwrap_or(".").to_owned()])
        }
        ToolKind::Glob => {
            let dir = optional(&["path"])?.unwrap_or(".");
            let base = match optional(&["pattern"])? {
                Some(pattern) => glob_base(dir, pattern),
                None => dir.to_owned(),
            };
            CallTarget::Files(Access::Read, vec![base])
        }
        ToolKind::WebFetch => {
            let url = required(&["url"])?;
            CallTarget::Web {
                url,
                host: host_of(url),
            }
        }
        ToolKind::Agent => CallTarget::Agent(optional(&["subagent_type", "agent", "name"])?),
        ToolKind::WebSearch | ToolKind::Mcp | ToolKind::Harmless | ToolKind::Other => CallTarget::Opaque,
    })
}

/// The directory a glob pattern searches: `dir` joined with the pattern's leading components that hold no glob
/// character. An absolute pattern (or `~/…`) replaces `dir`.
pub(crate) fn glob_base(dir: &str, pattern: &str) -> String {
    let literal: Vec<&str> = pattern
        .split('/')
        .take_while(|part| !part.contains(['*', '?', '[', ']', '{', '}']))
        .collect();
    // A fully literal pattern names the file itself; otherwise the literal directories above the first glob
    // component are the base.
    let prefix = literal.join("/");
    if pattern.starts_with('/') || pattern.starts_with("~/") || pattern == "~" {
        if prefix.is_empty() { "/".to_owned() } else { prefix }
    } else if prefix.is_empty() {
        dir.to_owned()
    } else {
        format!("{}/{}", dir.trim_end_matches('/'), prefix)
    }
}

/// The host of a URL, lowercase and without a trailing dot, as a browser would reach it (`user@` parts and
/// ports removed). `None` for a URL without a host.
pub(crate) fn host_of(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url.trim()).ok()?;
    let host = parsed.host_str()?.trim_end_matches('.').to_ascii_lowercase();
    (!host.is_empty()).then_some(host)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn both_families() {
        let args = json!({"command": "ls"});
        assert_eq!(describe("run_bash", &args), Ok(CallTarget::Shell("ls")));
        assert_eq!(
            describe("Read", &json!({"file_path": "a"})),
            Ok(CallTarget::Files(Access::Read, vec!["a".into()]))
        );
        assert_eq!(
            describe("file_write", &json!({"path": "b"})),
            Ok(CallTarget::Files(Access::Write, vec!["b".into()]))
        );
        assert_eq!(
            describe("Grep", &json!({"pattern": "x"})),
            Ok(CallTarget::Files(Access::Read, vec![".".into()]))
        );
        assert!(describe("Bash", &json!({})).unwrap_err().contains("`command`"));
        assert!(
            describe("Bash", &json!({"command": 3}))
                .unwrap_err()
                .contains("must be a string")
        );
        assert!(describe("Read", &json!("x")).unwrap_err().contains("JSON object"));
        assert_eq!(describe("mcp__a__b", &json!(null)), Ok(CallTarget::Opaque));
    }

    #[test]
    fn paths_a_tool_does_not_expand() {
        for path in [
            "$HOME/.ssh/id_rsa",
            "${HOME}/.aws/credentials",
            "src/$(id)/x",
            "~root/.ssh/id_rsa",
            "~+/secret",
            "~-",
            "~2/x",
            "file:///etc/passwd",
            "FILE:/etc/passwd",
        ] {
            let error = describe("Read", &json!({ "file_path": path })).unwrap_err();
            assert!(error.contains(path), "{path}: {error}");
            assert!(
                describe("Write", &json!({ "file_path": path, "content": "" })).is_err(),
                "{path}"
            );
        }
        for path in [
            "~/notes.md",
            "~notes.md",
            "src/a$.rs",
            "price$5.txt",
            "/tmp/x",
            "a:b.txt",
        ] {
            assert!(describe("Read", &json!({ "file_path": path })).is_ok(), "{path}");
        }
    }

    #[test]
    fn glob_bases() {
        assert_eq!(glob_base(".", "**/*.rs"), ".");
        assert_eq!(glob_base(".", "src/**/*.rs"), "./src");
        assert_eq!(glob_base("/p", "../../etc/*"), "/p/../../etc");
        assert_eq!(glob_base(".", "/etc/*.conf"), "/etc");
        assert_eq!(glob_base(".", "~/.ssh/*"), "~/.ssh");
        assert_eq!(glob_base(".", "README.md"), "./README.md");
    }

    #[test]
    fn hosts() {
        assert_eq!(host_of("https://Example.COM./x").as_deref(), Some("example.com"));
        assert_eq!(host_of("http://example.com@evil.io/").as_deref(), Some("evil.io"));
        assert_eq!(
            host_of("https://example.com.evil.io:8443").as_deref(),
            Some("example.com.evil.io")
        );
        assert_eq!(host_of("not a url"), None);
    }
}
