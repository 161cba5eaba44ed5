//! The terminal approver of `agent-guard run --interactive`: an ask put to the person at the terminal.

use std::io::{BufRead, Write};

use agent_core::{ApprovalAnswer, ApprovalFuture, ApprovalRequest, Approver};
use agent_tool_traits::DecidedBy;

/// Asks on the terminal: the call, why it asks, and the exact rule each answer would save; reads the answer from
/// standard input.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct TerminalApprover;

impl Approver for TerminalApprover {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> ApprovalFuture<'a, Option<ApprovalAnswer>> {
        let prompt = terminal_prompt(request);
        let can_save = !request.rules.is_empty();
        Box::pin(async move {
            let line = read_line(prompt).await?;
            let answer = parse_choice(&line, can_save);
            if let Some(why) = refused_choice(&line, can_save) {
                let mut stderr = std::io::stderr();
                let _shown = writeln!(stderr, "agent-guard: {why}: denied (deny is the default)");
            }
            answer
        })
    }

    fn party(&self, _request: &ApprovalRequest) -> agent_hooks::Approver {
        agent_hooks::Approver::Terminal
    }

    fn answer_question<'a>(&'a self, question: &'a str) -> ApprovalFuture<'a, Option<String>> {
        let prompt = format!("agent-guard: the agent asks: {question}\nanswer: ");
        Box::pin(read_line(prompt))
    }
}

/// The prompt of the terminal approver.
fn terminal_prompt(request: &ApprovalRequest) -> String {
    let provenance = &request.verdict.provenance;
    let step = provenance.step.map_or("finding", DecidedBy::as_str);
    let rules = request
        .rules
        .iter()
        .map(|r| format!("`{r}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let always = if request.rules.is_empty() {
        "  (allow always is not offered: this ask comes from a rule or a safety check that no allow rule overrides)\n"
            .to_owned()
    } else {
        format!(
            "  [a] allow always  -> saves {rules} to {}\n",
            request.settings_file.display()
        )
    };
    let never = if request.rules.is_empty() {
        format!(
            "  [n] don't ask again -> denies `{}` for this session\n",
            request.call.name
        )
    } else {
        format!("  [n] don't ask again -> denies {rules} for this session\n")
    };
    let choices = if request.rules.is_empty() {
        "o/D/n"
    } else {
        "o/a/D/n"
    };
    format!(
        "\nagent-guard: `{}` wants to run with {}\n  asked because: {} ({}/{})\n  [o] allow once\n{always}  [d] deny (the default: Enter or any other key)\n{never}choice [{choices}]: ",
        request.call.name,
        request.call.args,
        request.verdict.reason(),
        provenance.layer,
        step,
    )
}

fn parse_choice(line: &str, can_save: bool) -> Option<ApprovalAnswer> {
    match line.trim().to_ascii_lowercase().as_str() {
        "o" | "once" | "y" | "yes" => Some(ApprovalAnswer::AllowOnce),
        "a" | "always" if can_save => Some(ApprovalAnswer::AllowAlways),
        "n" | "never" => Some(ApprovalAnswer::DontAskAgain),
        // Anything else, an unavailable choice included, is the safe answer.
        _ => Some(ApprovalAnswer::Deny),
    }
}

/// Why an answer typed at the prompt is none of the choices offered (an empty line is the default, deny).
fn refused_choice(line: &str, can_save: bool) -> Option<String> {
    match line.trim().to_ascii_lowercase().as_str() {
        "" | "o" | "once" | "y" | "yes" | "d" | "deny" | "n" | "never" => None,
        "a" | "always" if can_save => None,
        "a" | "always" => Some("allow always is not offered for this ask".to_owned()),
        other => Some(format!("`{other}` is not one of the choices")),
    }
}

/// Prints `prompt` on standard error and reads one line from standard input; `None` at end of input.
async fn read_line(prompt: String) -> Option<String> {
    let read = tokio::task::spawn_blocking(move || {
        let mut stderr = std::io::stderr();
        let _shown = stderr.write_all(prompt.as_bytes()).and_then(|()| stderr.flush());
        let mut line = String::new();
        match std::io::stdin().lock().read_line(&mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(line.trim_end_matches(['\r', '\n']).to_owned()),
        }
    });
    read.await.ok().flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices() {
        assert_eq!(parse_choice("o", true), Some(ApprovalAnswer::AllowOnce));
        assert_eq!(parse_choice(" A\n", true), Some(ApprovalAnswer::AllowAlways));
        assert_eq!(
            parse_choice("a", false),
            Some(ApprovalAnswer::Deny),
            "always is not offered without a rule"
        );
        assert_eq!(parse_choice("n", false), Some(ApprovalAnswer::DontAskAgain));
        assert_eq!(parse_choice("whatever", true), Some(ApprovalAnswer::Deny));
        assert_eq!(parse_choice("", true), Some(ApprovalAnswer::Deny), "Enter denies");
        assert!(refused_choice("", true).is_none() && refused_choice("d", false).is_none());
        assert!(
            refused_choice("x", true)
                .unwrap()
                .contains("`x` is not one of the choices")
        );
        assert!(refused_choice("a", false).unwrap().contains("not offered"));
    }
}
