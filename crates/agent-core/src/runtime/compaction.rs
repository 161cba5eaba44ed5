//! Context compaction: the steps the model is shown, and a deterministic summary that replaces the old ones.

use agent_hooks::CallStatus;
use agent_runtime_limits::estimate_tokens;

use super::report::{BgNotification, CallReport, StepRecord};

/// The most recent steps a compaction keeps whole (with every call and its result).
pub(super) const KEEP_RECENT_STEPS: usize = 2;
/// The summary keeps at most this many lines (the most recent); older ones are counted as omitted, so that the
/// summary of a long session stays far below the soft limit.
const MAX_SUMMARY_LINES: usize = 40;
/// A call's arguments are shown up to this many characters in its summary line.
const ARGS_CHARS: usize = 100;
/// A result is shown up to this many characters in its summary line.
const PREVIEW_CHARS: usize = 160;

/// What the model is shown of a session: the summary of the steps compacted away, then the steps kept whole, with
/// the background results injected between them. The session report keeps every step; only this shrinks.
#[derive(Debug, Clone, Default)]
pub(super) struct Context {
    summary: Option<Summary>,
    steps: Vec<StepRecord>,
    /// Background results shown to the model, each with the number of kept steps before it.
    notices: Vec<(usize, BgNotification)>,
}

/// The summary of compacted steps: one line per call or background result, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Summary {
    first_step: u32,
    last_step: u32,
    lines: Vec<String>,
    /// Older lines dropped to keep the summary short.
    omitted: usize,
}

/// What one compaction did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Compacted {
    /// Steps replaced by the summary in this compaction.
    pub(super) summarised_steps: usize,
    /// The summary now heading the context (`None` when nothing was ever compacted).
    pub(super) summary: Option<String>,
}

impl Context {
    /// The steps the model is shown whole.
    pub(super) fn steps(&self) -> &[StepRecord] {
        &self.steps
    }

    /// Adds a step after the model's turn.
    pub(super) fn push_step(&mut self, step: StepRecord) {
        self.steps.push(step);
    }

    /// Adds a background result injected before the next turn.
    pub(super) fn push_notice(&mut self, notification: BgNotification) {
        self.notices.push((self.steps.len(), notification));
    }

    /// The summary text, when steps were compacted.
    pub(super) fn summary(&self) -> Option<String> {
        self.summary.as_ref().map(Summary::text)
    }

    /// The estimated tokens of what the model is shown, counted as the token budget counts them: the summary, each
    /// call's arguments and result, each background result.
    pub(super) fn estimate_tokens(&self) -> u64 {
        let summary = self.summary().map_or(0, |text| estimate_tokens(&text));
        let calls = self
            .steps
            .iter()
            .flat_map(|step| &step.calls)
            .fold(0_u64, |sum, call| {
                sum.saturating_add(estimate_tokens(&call.call.args.to_string()))
                    .saturating_add(estimate_tokens(&call.output.content))
            });
        let notices = self.notices.iter().fold(0_u64, |sum, (_, notification)| {
            sum.saturating_add(estimate_tokens(&notification.message()))
        });
        summary.saturating_add(calls).saturating_add(notices)
    }

    /// Replaces every step but the `keep_recent` most recent ones, and the background results shown before the
    /// first kept step, by summary lines (appended to an earlier summary). A step is kept or summarised whole, so a
    /// kept result always has its call beside it, and every summarised call keeps its id, tool and a preview of its
    /// result (a background start keeps its task id, so the later result still names a call the model saw).
    /// Deterministic; compacting again with nothing older than `keep_recent` steps changes nothing.
    pub(super) fn compact(&mut self, keep_recent: usize) -> Compacted {
        let dropped = self.steps.len().saturating_sub(keep_recent);
        if dropped == 0 {
            return Compacted {
                summarised_steps: 0,
                summary: self.summary(),
            };
        }
        let old: Vec<StepRecord> = self.steps.drain(..dropped).collect();
        let (old_notices, kept_notices): (Vec<_>, Vec<_>) = std::mem::take(&mut self.notices)
            .into_iter()
            .partition(|(position, _)| *position <= dropped);
        self.notices = kept_notices
            .into_iter()
            .map(|(position, notification)| (position.saturating_sub(dropped), notification))
            .collect();
        let mut lines = Vec::new();
        let mut notices = old_notices.into_iter().peekable();
        for (index, step) in old.iter().enumerate() {
            while let Some((_, notification)) = notices.next_if(|(position, _)| *position <= index) {
                lines.push(notice_line(&notification));
            }
            lines.extend(step.calls.iter().map(|call| call_line(step.step, call)));
        }
        lines.extend(notices.map(|(_, notification)| notice_line(&notification)));
        let first = old.first().map_or(0, |step| step.step);
        let last = old.last().map_or(0, |step| step.step);
        let mut summary = self.summary.take().unwrap_or(Summary {
            first_step: first,
            last_step: last,
            lines: Vec::new(),
            omitted: 0,
        });
        summary.last_step = last;
        summary.lines.extend(lines);
        let excess = summary.lines.len().saturating_sub(MAX_SUMMARY_LINES);
        summary.lines.drain(..excess);
        summary.omitted = summary.omitted.saturating_add(excess);
        self.summary = Some(summary);
        Compacted {
            summarised_steps: old.len(),
            summary: self.summary(),
        }
    }

    /// Compacts keeping the `keep_recent` most recent steps whole, and when the estimate is still over `limit`,
    /// keeping fewer, down to none: a single step with a huge result would otherwise stay over the limit and end
    /// the session, where its summary line (a preview, and the file a large result was written to) lets the model
    /// go on. The most recent steps go last, and only when summarising them makes the context smaller (a summary
    /// line of a short result can be longer than the result).
    pub(super) fn compact_within(&mut self, limit: u64, keep_recent: usize) -> Compacted {
        let mut compacted = self.compact(keep_recent);
        for keep in (0..keep_recent).rev() {
            let estimate = self.estimate_tokens();
            if estimate <= limit {
                break;
            }
            let mut fewer = self.clone();
            let more = fewer.compact(keep);
            if more.summarised_steps == 0 || fewer.estimate_tokens() >= estimate {
                continue;
            }
            *self = fewer;
            compacted = Compacted {
                summarised_steps: compacted.summarised_steps.saturating_add(more.summarised_steps),
                summary: more.summary,
            };
        }
        compacted
    }
}

impl Summary {
    fn text(&self) -> String {
        let steps = if self.first_step == self.last_step {
            format!("step {}", self.first_step)
        } else {
            format!("steps {}-{}", self.first_step, self.last_step)
        };
        let omitted = if self.omitted == 0 {
            String::new()
        } else {
            format!(" ({} older line(s) omitted)", self.omitted)
        };
        format!(
            "[context compacted] The calls and results of {steps} were replaced by this summary, one line per call \
             with a preview of its result{omitted}; a result written to a file can be read again from it.\n{}",
            self.lines.join("\n")
        )
    }
}

/// `step 3 [c7] read_file {"file_path":"a.txt"} -> OK (1234 chars): preview…`
fn call_line(step: u32, report: &CallReport) -> String {
    let status = match report.status {
        CallStatus::Ok => "OK",
        CallStatus::Fail => "FAIL",
        CallStatus::Denied => "DENIED",
    };
    let content = &report.output.content;
    let file = report
        .persisted
        .as_ref()
        .map(|path| format!(" [full result in {}]", path.display()))
        .unwrap_or_default();
    format!(
        "step {step} [{}] {} {} -> {status} ({} chars){file}: {}",
        report.call.id,
        report.call.name,
        shorten(&report.call.args.to_string(), ARGS_CHARS),
        content.chars().count(),
        shorten(content, PREVIEW_CHARS)
    )
}

/// `background bg-1 run_bash finished (12 chars): preview…`
fn notice_line(notification: &BgNotification) -> String {
    let outcome = if notification.report.output.is_error {
        "failed"
    } else {
        "finished"
    };
    let content = &notification.report.output.content;
    format!(
        "background task {} `{}` {outcome} ({} chars): {}",
        notification.task_id,
        notification.report.call.name,
        content.chars().count(),
        shorten(content, PREVIEW_CHARS)
    )
}

/// The first `max` characters of `text` on one line, with `…` when cut.
fn shorten(text: &str, max: usize) -> String {
    let mut line: String = text
        .chars()
        .take(max)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if text.chars().nth(max).is_some() {
        line.push('…');
    }
    line
}

#[cfg(test)]
mod tests {
    use agent_tool_traits::{Decision, Layer, Provenance, ToolCall, ToolOutput, Verdict};
    use serde_json::json;

    use super::*;
    use crate::telemetry::DecisionSource;

    fn report(id: &str, output: &str) -> CallReport {
        CallReport {
            call: ToolCall::new(id, "read_file", json!({"file_path": format!("{id}.txt")})),
            verdict: Verdict::new(Decision::Allow, "read-only", Provenance::layer(Layer::Rules)),
            source: DecisionSource::Config,
            answer: None,
            status: CallStatus::Ok,
            output: ToolOutput::ok(output),
            ran: None,
            persisted: None,
            contexts: Vec::new(),
            confinement: None,
            undo_held: Vec::new(),
            approver: None,
        }
    }

    /// `count` steps of two calls each, with long results.
    fn context(count: u32) -> Context {
        let mut context = Context::default();
        for step in 1..=count {
            let calls = vec![
                report(&format!("c{step}a"), &format!("{step}a ").repeat(500)),
                report(&format!("c{step}b"), &format!("{step}b ").repeat(500)),
            ];
            context.push_step(StepRecord { step, calls });
        }
        context
    }

    fn ids(context: &Context) -> Vec<String> {
        context
            .steps()
            .iter()
            .flat_map(|step| &step.calls)
            .map(|call| call.call.id.clone())
            .collect()
    }

    #[test]
    fn the_recent_steps_stay_whole_and_the_old_calls_become_summary_lines() {
        let mut context = context(5);
        let before = context.estimate_tokens();
        let compacted = context.compact(2);
        assert_eq!(compacted.summarised_steps, 3);
        assert_eq!(ids(&context), ["c4a", "c4b", "c5a", "c5b"]);
        let summary = compacted.summary.unwrap();
        assert!(summary.starts_with("[context compacted] The calls and results of steps 1-3"));
        for id in ["c1a", "c1b", "c2a", "c2b", "c3a", "c3b"] {
            assert_eq!(
                summary.matches(&format!("[{id}] read_file")).count(),
                1,
                "every summarised call keeps its id and tool: {summary}"
            );
        }
        assert!(
            summary.contains(r#"step 1 [c1a] read_file {"file_path":"c1a.txt"} -> OK (1500 chars): 1a 1a"#)
        );
        assert!(!summary.contains("c4a"), "kept calls are not summarised");
        assert!(context.estimate_tokens() < before * 3 / 5);
    }

    #[test]
    fn a_kept_result_always_has_its_call_and_nothing_is_orphaned() {
        let mut context = context(4);
        context.compact(1);
        for step in context.steps() {
            assert_eq!(step.step, 4);
            for call in &step.calls {
                assert!(
                    call.output.content.starts_with("4"),
                    "the result beside its own call"
                );
            }
        }
    }

    #[test]
    fn compacting_again_changes_nothing_until_new_steps_come() {
        let mut once = context(5);
        let first = once.compact(2);
        let mut twice = once.clone();
        let second = twice.compact(2);
        assert_eq!(second.summarised_steps, 0);
        assert_eq!(second.summary, first.summary, "idempotent");
        assert_eq!(ids(&twice), ids(&once));
        assert_eq!(twice.estimate_tokens(), once.estimate_tokens());

        let mut same = context(5);
        assert_eq!(same.compact(2), first, "deterministic");
    }

    #[test]
    fn a_later_compaction_extends_the_summary() {
        let mut context = context(3);
        context.compact(1);
        for step in 4..=5 {
            context.push_step(StepRecord {
                step,
                calls: vec![report(&format!("c{step}a"), "x")],
            });
        }
        let compacted = context.compact(1);
        let summary = compacted.summary.unwrap();
        assert!(summary.contains("steps 1-4"), "{summary}");
        assert!(summary.contains("[c1a]") && summary.contains("[c3b]") && summary.contains("[c4a]"));
        assert_eq!(ids(&context), ["c5a"]);
    }

    #[test]
    fn fewer_steps_are_kept_whole_when_the_recent_ones_alone_are_over_the_limit() {
        // Step 3 alone is far over the limit, steps 1-2 are small.
        let mut context = context(2);
        context.push_step(StepRecord {
            step: 3,
            calls: vec![report("c3a", &"big ".repeat(20_000))],
        });
        let mut roomy = context.clone();
        let compacted = roomy.compact_within(u64::MAX, 2);
        assert_eq!(
            compacted.summarised_steps, 1,
            "under the limit: the usual two kept"
        );
        assert_eq!(ids(&roomy), ["c2a", "c2b", "c3a"]);

        let compacted = context.compact_within(2_000, 2);
        assert_eq!(compacted.summarised_steps, 3, "the big step summarised too");
        assert!(ids(&context).is_empty());
        assert!(context.estimate_tokens() <= 2_000);
        let summary = compacted.summary.unwrap();
        assert!(
            summary.contains("steps 1-3") && summary.contains("[c3a] read_file"),
            "{summary}"
        );

        // Summarising short results would make the context larger: they stay whole, over the limit or not.
        let mut short = Context::default();
        for step in 1..=3 {
            short.push_step(StepRecord {
                step,
                calls: vec![report(&format!("c{step}a"), "ok")],
            });
        }
        let compacted = short.compact_within(1, 2);
        assert_eq!(compacted.summarised_steps, 1, "only the usual compaction");
        assert_eq!(ids(&short), ["c2a", "c3a"]);

        // A limit that a single small step already meets keeps it.
        let mut small = self::context(3);
        let one_step = {
            let mut probe = small.clone();
            probe.compact(1);
            probe.estimate_tokens()
        };
        small.compact_within(one_step, 2);
        assert_eq!(ids(&small), ["c3a", "c3b"]);
    }

    #[test]
    fn the_summary_keeps_the_most_recent_lines_only() {
        let mut context = context(30);
        let summary = context.compact(0).summary.unwrap();
        assert_eq!(summary.lines().count(), 1 + MAX_SUMMARY_LINES);
        assert!(summary.contains("(20 older line(s) omitted)"));
        assert!(summary.contains("[c30b]") && !summary.contains("[c10b]"));
        assert!(estimate_tokens(&summary) < 4_000);
    }

    #[test]
    fn background_results_before_the_kept_steps_are_summarised_in_order() {
        let mut context = context(2);
        let notification = BgNotification {
            session_id: "s".into(),
            task_id: "bg-1".into(),
            report: report("inner", "built"),
        };
        context.push_notice(notification.clone());
        context.push_step(StepRecord {
            step: 3,
            calls: vec![report("c3a", "x")],
        });
        context.push_notice(notification);
        let summary = context.compact(1).summary.unwrap();
        let lines: Vec<&str> = summary.lines().skip(1).collect();
        assert_eq!(lines.len(), 5, "the notice after the kept step stays: {lines:?}");
        assert!(lines[3].starts_with("step 2 [c2b]"));
        assert!(lines[4].starts_with("background task bg-1 `read_file` finished (5 chars): built"));
        assert_eq!(context.notices.len(), 1);
        assert_eq!(context.notices[0].0, 1, "after the kept step");
    }

    #[test]
    fn shorten_cuts_on_characters_and_flattens_lines() {
        assert_eq!(shorten("ééé\nabc", 4), "ééé …");
        assert_eq!(shorten("abc", 3), "abc");
    }
}
