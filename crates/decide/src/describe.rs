//! Step 1 of a decision: what the call touches, as the rules see it, and what the tool's own checks found.

use agent_rules::{CallTarget, describe};
use agent_tool_traits::{Decision, Layer, Provenance, Verdict};

use crate::bounded::CallInput;

/// A call described: its target and the findings known before any layer looked at it.
#[derive(Debug)]
pub(crate) struct Described<'a> {
    /// What the call touches: a command line, files, a URL, a subagent, or nothing the rules can look into.
    pub(crate) target: CallTarget<'a>,
    /// The tool's own `check_permissions` that did not allow, and a deny of input the tool cannot take.
    pub(crate) findings: Vec<Verdict>,
}

impl<'a> Described<'a> {
    /// Describes `call`. Input that does not fit the tool is denied and the call is treated as opaque, so the
    /// rules still see its name.
    pub(crate) fn of(call: &'a CallInput) -> Self {
        let mut findings: Vec<Verdict> = call
            .checks
            .iter()
            .filter(|c| c.decision != Decision::Allow)
            .map(|c| Verdict::new(c.decision, c.reason.clone(), Provenance::layer(Layer::Tool)))
            .collect();
        let target = describe(&call.tool, &call.args).unwrap_or_else(|why| {
            findings.push(Verdict::new(
                Decision::Deny,
                format!("invalid input for `{}`: {why}", call.tool),
                Provenance::layer(Layer::Tool),
            ));
            CallTarget::Opaque
        });
        Self { target, findings }
    }
}

#[cfg(test)]
mod tests {
    use agent_tool_traits::PermissionCheck;
    use serde_json::json;

    use super::*;

    #[test]
    fn a_shell_call_is_described_by_its_command_line() {
        let call = CallInput::new("Bash", json!({"command": "ls -la"}));
        let described = Described::of(&call);
        assert!(matches!(described.target, CallTarget::Shell("ls -la")));
        assert!(described.findings.is_empty());
    }

    #[test]
    fn input_the_tool_cannot_take_is_denied_and_opaque() {
        let call = CallInput::new("Read", json!({"file_path": 7}));
        let described = Described::of(&call);
        assert!(matches!(described.target, CallTarget::Opaque));
        let [finding] = described.findings.as_slice() else {
            panic!("one finding expected: {:?}", described.findings)
        };
        assert_eq!(finding.decision, Decision::Deny);
        assert!(
            finding.reason().contains("invalid input for `Read`"),
            "{}",
            finding.reason()
        );
    }

    #[test]
    fn only_the_tool_checks_that_do_not_allow_are_findings() {
        let mut call = CallInput::new("Write", json!({"file_path": "a.txt", "content": ""}));
        call.checks = vec![
            PermissionCheck {
                decision: Decision::Allow,
                reason: "fine".to_owned(),
            },
            PermissionCheck {
                decision: Decision::Ask,
                reason: "overwrites a file".to_owned(),
            },
        ];
        let described = Described::of(&call);
        assert!(matches!(described.target, CallTarget::Files(..)));
        let reasons: Vec<String> = described.findings.iter().map(Verdict::reason).collect();
        assert_eq!(reasons, ["overwrites a file"]);
        assert_eq!(
            described.findings.first().map(|f| f.provenance.layer),
            Some(Layer::Tool)
        );
    }
}
