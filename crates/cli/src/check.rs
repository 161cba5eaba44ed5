//! `agent-guard check`: the PreToolUse hook, one input on stdin or `--jsonl`, failing closed without `--jsonl`.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use agent_decide::TelemetrySettings;
use agent_decide::{CallInput, Decided, Deciders, DecisionBound, Guard, HookInput, HookOutput};
use agent_hooks::{Approver, AuditDetail};
use agent_rules::SessionState;
use agent_tool_traits::{DecidedBy, Decision, Layer, Provenance, SandboxProfile, Verdict};
use anyhow::{Context, Result, bail};

use crate::DecideArgs;
use crate::hook_audit;
use crate::hook_timer::HookTimer;
use crate::load::Guards;
use crate::remote::{self, OnTimeout, RemoteAnswer, RemoteArgs};
use crate::taint_store::TaintStore;

mod jsonl;

/// The largest hook input read, in bytes. A model writes far less in one tool call (its output per turn is some
/// ten thousand tokens), so anything larger is not a call the coding agent made and is refused, not decided.
pub(crate) const MAX_INPUT: usize = 4 << 20;

/// What the hook may spend besides the decision: reading stdin and loading the settings. Both are quick unless
/// something is stuck (a stdin that is never closed, a settings file that is a FIFO); past the decision bound plus
/// this, the hook gives up with exit code 2 instead of waiting for the coding agent's timeout.
pub(crate) const READ_AND_LOAD_LIMIT: Duration = Duration::from_secs(10);

/// The bound on the whole hook run: reading, loading and deciding (the decision's bound is agent-decide's,
/// `AGENT_GUARD_DECISION_TIMEOUT_MS`).
pub(crate) fn hook_deadline() -> Duration {
    DecisionBound::from_env()
        .limit()
        .saturating_add(READ_AND_LOAD_LIMIT)
}

pub(crate) fn run(args: &DecideArgs, jsonl: bool, explain: bool, remote: &RemoteArgs) -> Result<ExitCode> {
    if jsonl {
        if remote.server.is_some() {
            return Err(crate::UsageError(
                "`--server` puts one call to a person; it cannot be used with `--jsonl`".to_owned(),
            )
            .into());
        }
        return jsonl::run_jsonl(args, explain);
    }
    // Everything below that fails returns an error, which `main` turns into exit code 2 with the reason on stderr:
    // the coding agent blocks the call. Only a decision printed on stdout ends in exit code 0. Each phase is
    // bounded by the run's timer: reading and loading, the decision (a deny past its bound), and what follows it
    // (with a server, the wait for a person's answer).
    let started = Instant::now();
    let limit = hook_deadline();
    let mut timer = HookTimer::start(
        limit,
        &format!(
            "no decision within {} ms (stdin not closed, or the settings cannot be read); the call is blocked",
            limit.as_millis()
        ),
    );
    let mut guards = Guards::new(args)?;
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(MAX_INPUT as u64 + 1)
        .read_to_end(&mut bytes)
        .context("cannot read the hook input from stdin")?;
    let input = parse_input(bytes)?;
    failpoint("check");
    let answered = match &remote.server {
        Some(server) => decide_asking_server(
            &mut guards,
            &input,
            explain,
            server,
            remote.on_timeout,
            &mut timer,
        ),
        None => answer_hook_input(&mut guards, &input, explain, Bound::Timer(&mut timer)),
    };
    // The answer first, stdout closed; the audit row after it, bounded, never changing it; then the same row to
    // the telemetry sender, which this process does not wait for.
    timer.answer(&answered.output.to_json())?;
    let elapsed = started.elapsed();
    // The row (its input redacted by the credential scanner) is built only when the log or telemetry keeps it.
    let db = hook_audit::database_of((&input).into());
    let telemetry = answered.telemetry.as_ref().filter(|t| t.enabled);
    if db.is_none() && telemetry.is_none() {
        return Ok(ExitCode::SUCCESS);
    }
    let row = answered
        .audit(elapsed)
        .row(&(&input).into(), hook_audit::CHECK_AGENT);
    if let Some(db) = &db {
        hook_audit::write_one(db, &row, &mut timer);
    }
    if let Some(settings) = telemetry {
        crate::telemetry::hand_off(settings, std::slice::from_ref(&row));
    }
    Ok(ExitCode::SUCCESS)
}

/// The answer to one hook input, with what its audit row records besides the input.
pub(crate) struct Answered {
    /// The line printed.
    pub(crate) output: HookOutput,
    /// Who or what decided: the layer and step (`rules/allow-rule`), the rules layer for settings that cannot
    /// be loaded, `approval/approver` for a person's answer through the server.
    decided_by: String,
    /// The permission mode the call was decided in, when a guard was built.
    mode: Option<String>,
    /// The deciding rule and its file, the sandbox of an allowed shell line, who answered an ask.
    detail: AuditDetail,
    /// `agentGuard.telemetry` of the call's settings, when they loaded.
    telemetry: Option<TelemetrySettings>,
    /// Whether the answer runs the call under the `workspace-write` sandbox, whose runs `agent-guard undo`
    /// records under the call's key: the row keeps the key then.
    recorded: bool,
}

/// The audit row's `sandbox` of a line allowed to run outside the sandbox ([`Decided::outside`]).
const OUTSIDE: &str = "none: outside the sandbox, by the user's rule";

impl Answered {
    fn decided(output: HookOutput, decided: &Decided, guard: &Guard) -> Self {
        let verdict = decided.verdict();
        Self {
            output,
            decided_by: verdict.provenance.layer_step().to_string(),
            mode: Some(guard.policy().mode().to_string()),
            detail: AuditDetail {
                sandbox: match (&decided.outside, decided.confinement) {
                    _ if verdict.decision != Decision::Allow => None,
                    (Some(_), _) => Some(OUTSIDE.to_owned()),
                    (None, confinement) => confinement.map(|c| c.to_string()),
                },
                ..AuditDetail::of_provenance(&verdict.provenance)
            },
            recorded: verdict.decision == Decision::Allow
                && decided.outside.is_none()
                && decided
                    .confinement
                    .is_some_and(|c| c.profile == SandboxProfile::WorkspaceWrite),
            telemetry: Some(guard.telemetry().clone()),
        }
    }

    /// The answer of a line no audit row or telemetry records (the log off, telemetry off for its settings):
    /// only its output.
    fn without_row(output: HookOutput) -> Self {
        Self {
            output,
            decided_by: String::new(),
            mode: None,
            detail: AuditDetail::default(),
            telemetry: None,
            recorded: false,
        }
    }

    fn settings_deny(why: &str) -> Self {
        Self {
            output: settings_deny_output(why),
            decided_by: Layer::Rules.to_string(),
            mode: None,
            detail: AuditDetail::default(),
            telemetry: None,
            recorded: false,
        }
    }

    /// What the audit row of this answer records.
    fn audit(&self, elapsed: Duration) -> hook_audit::Answer<'_> {
        let (decision, reason) = hook_audit::printed(&self.output);
        hook_audit::Answer {
            decision,
            reason,
            decided_by: &self.decided_by,
            mode: self.mode.as_deref(),
            elapsed,
            detail: &self.detail,
            recorded: self.recorded,
        }
    }
}

/// How a decision is held to its bound.
pub(crate) enum Bound<'a> {
    /// On a worker thread, waited for (`--jsonl`, the server): agent-decide's [`DecisionBound::decide`].
    Worker,
    /// On this thread, under the hook run's timer ([`DecisionBound::decide_timed`]); once decided, the timer
    /// bounds what follows by [`READ_AND_LOAD_LIMIT`] (plus `extra`, a server's wait for an answer).
    Timer(&'a mut HookTimer),
    /// On this thread, with the bound held by the caller, which runs it on a thread of its own and answers the
    /// deny past the bound itself (the server: one hand-off per decision instead of two).
    Caller,
}

/// The timer of a decision whose caller holds the bound: nothing to arm.
struct CallerHolds;

impl agent_decide::DecisionTimer for CallerHolds {
    fn arm(&mut self, _limit: Duration, _past_the_bound: &Decided) {}
    fn disarm(&mut self) {}
}

/// One hook input from the bytes of stdin; the error says what is wrong with it.
fn parse_input(bytes: Vec<u8>) -> Result<HookInput> {
    if bytes.len() > MAX_INPUT {
        bail!(
            "invalid hook input: larger than {} MiB, more than any tool call holds",
            MAX_INPUT >> 20
        );
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        anyhow::anyhow!(
            "invalid hook input: not UTF-8 text (byte {})",
            e.utf8_error().valid_up_to()
        )
    })?;
    parse_line(&text)
}

/// One hook input from one line of text. Besides what [`HookInput::parse`] checks, the working directory must be
/// absolute: the sandbox's roots and every relative path hang on it, so a relative one would be a guess.
fn parse_line(text: &str) -> Result<HookInput> {
    let text = text.trim();
    if text.is_empty() {
        bail!("invalid hook input: stdin is empty");
    }
    let mut input = HookInput::parse(text)?;
    if !std::path::Path::new(&input.cwd).is_absolute() {
        bail!(
            "invalid hook input: `cwd` is `{}`, not an absolute path",
            input.cwd
        );
    }
    if input.tool_use_id.is_none() {
        input.tool_use_id = Some(new_call_key());
    }
    Ok(input)
}

/// A key for a tool call the coding agent sent without its own id: the audit row and the runs `agent-guard
/// undo` records for the call are linked by it. Unique, not secret: 64 bits from the standard library's randomly
/// seeded hasher (seeded once per process from the operating system, varied per key).
fn new_call_key() -> String {
    use std::hash::{BuildHasher as _, Hasher as _};
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
    // The process's id, asked of the kernel once.
    static PID: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    hasher.write_u32(*PID.get_or_init(std::process::id));
    call_key(hasher.finish())
}

/// `ag-` and `bits` in 16 hex digits, as `format!("ag-{bits:016x}")` writes them, without the formatting machinery.
fn call_key(bits: u64) -> String {
    let mut key = String::with_capacity(19);
    key.push_str("ag-");
    for shift in (0..16).rev() {
        let nibble = u32::try_from((bits >> (shift * 4)) & 0xf).unwrap_or_default();
        key.push(char::from_digit(nibble, 16).unwrap_or('0'));
    }
    key
}

/// Decides one input the way the hook does, `--jsonl` lines alike: settings that cannot be loaded deny (a broken
/// configuration must not let calls through unchecked); the call is decided alone, in a fresh session (the coding
/// agent runs the hook once per call), through agent-decide's bounded entry, so a decision past the bound
/// (`AGENT_GUARD_DECISION_TIMEOUT_MS`, default 5 s) is a deny. A panic of the decision reaches the caller.
pub(crate) fn decide_hook_input(
    guards: &mut Guards<'_>,
    input: &HookInput,
    explain: bool,
    bound: Bound<'_>,
) -> HookOutput {
    answer_hook_input(guards, input, explain, bound).output
}

/// [`decide_hook_input`] with what the audit row of the answer records.
fn answer_hook_input(
    guards: &mut Guards<'_>,
    input: &HookInput,
    explain: bool,
    bound: Bound<'_>,
) -> Answered {
    let settings = guards.settings_files().to_vec();
    let guard = match guards.get(&input.cwd, input.permission_mode.as_deref()) {
        Ok(guard) => Arc::clone(guard),
        Err(why) => return Answered::settings_deny(why),
    };
    let session = Session::of(input);
    let (output, decided) = decide_bounded(
        Arc::clone(&guard),
        input,
        &settings,
        bound,
        Duration::ZERO,
        session.state.clone(),
    );
    session.record(input, &decided, printed_decision(&output));
    if explain {
        eprintln!("{}", crate::explain::render_text(input, &decided));
    }
    Answered::decided(output, &decided, &guard)
}

/// The session of a hook input: where its taint is kept and what it holds now. Without a `session_id` nothing
/// is read or kept, and the call is decided as in a fresh session.
pub(crate) struct Session {
    store: Option<TaintStore>,
    /// The state the call is decided in.
    pub(crate) state: SessionState,
}

impl Session {
    /// Reads the taint of `input`'s session (one small file), when it names one and there is a place for it.
    pub(crate) fn of(input: &HookInput) -> Self {
        if input.session_id.is_empty() {
            return Self {
                store: None,
                state: SessionState::default(),
            };
        }
        let store = TaintStore::for_cwd(Path::new(&input.cwd));
        let state = store.as_ref().map_or_else(SessionState::default, |store| {
            SessionState::default().with_taint(store.load(&input.session_id))
        });
        Self { store, state }
    }

    /// Records what `decided` adds to the session, for a call answered `decision`; a failure is one line on
    /// stderr and changes no answer.
    pub(crate) fn record(&self, input: &HookInput, decided: &Decided, decision: Decision) {
        let Some(store) = &self.store else { return };
        if let Err(why) = store.record(&input.session_id, &decided.taint, decision) {
            eprintln!("agent-guard: the session's taint was not recorded: {why}");
        }
    }
}

/// Decides one input with the guard of its working directory on this thread, as [`decide_hook_input`] does once
/// it has the guard, unbounded: the server (`agent-guard serve`) decides through here on a thread of its own and
/// holds the decision's bound itself.
pub(crate) fn decide_with_guard(
    guard: Arc<Guard>,
    input: &HookInput,
    settings: &[PathBuf],
) -> (HookOutput, Decided) {
    let session = Session::of(input);
    let decided = decide_bounded(
        guard,
        input,
        settings,
        Bound::Caller,
        Duration::ZERO,
        session.state.clone(),
    );
    session.record(input, &decided.1, printed_decision(&decided.0));
    decided
}

/// The decision `output` prints (an allow that cannot be wrapped in the sandbox is printed as an ask).
fn printed_decision(output: &HookOutput) -> Decision {
    match output.decision() {
        "allow" => Decision::Allow,
        "ask" => Decision::Ask,
        _ => Decision::Deny,
    }
}

/// Decides one input with `guard` within the decision's bound, held as `bound` says; `after` is what the hook
/// run's timer grants beyond [`READ_AND_LOAD_LIMIT`] once decided.
fn decide_bounded(
    guard: Arc<Guard>,
    input: &HookInput,
    settings: &[PathBuf],
    bound: Bound<'_>,
    after: Duration,
    session: SessionState,
) -> (HookOutput, Decided) {
    let call = CallInput::new(input.tool_name.as_str(), input.tool_input.clone());
    let deciders = Deciders::new(guard);
    let decided = match bound {
        Bound::Worker => DecisionBound::from_env().decide(&deciders, call, session),
        Bound::Caller => DecisionBound::from_env().decide_timed(&mut CallerHolds, &deciders, &call, &session),
        Bound::Timer(timer) => {
            let decided = DecisionBound::from_env().decide_timed(timer, &deciders, &call, &session);
            let limit = READ_AND_LOAD_LIMIT.saturating_add(after);
            timer.block_after(
                limit,
                &format!(
                    "no answer within {} ms of the decision; the call is blocked",
                    limit.as_millis()
                ),
            );
            decided
        }
    };
    (output(input, &decided, settings, None), decided)
}

/// The output when the settings of an input's working directory cannot be loaded: a deny.
pub(crate) fn settings_deny_output(why: &str) -> HookOutput {
    HookOutput::from_verdict(&settings_deny(why))
}

/// Decides one input like [`decide_hook_input`]; an ask goes to the approval queue of `server` and the person's
/// answer becomes the decision. An allow runs under the kernel sandbox the ask's decision chose (what a user's allow
/// grants); a deny stands. No answer in time, or no server, prints the ask (or, with `--on-timeout deny`, a
/// deny): the coding agent then asks in its terminal.
fn decide_asking_server(
    guards: &mut Guards<'_>,
    input: &HookInput,
    explain: bool,
    server: &str,
    on_timeout: OnTimeout,
    timer: &mut HookTimer,
) -> Answered {
    let settings = guards.settings_files().to_vec();
    let guard = match guards.get(&input.cwd, input.permission_mode.as_deref()) {
        Ok(guard) => Arc::clone(guard),
        Err(why) => return Answered::settings_deny(why),
    };
    let session = Session::of(input);
    let (local, mut decided) = decide_bounded(
        Arc::clone(&guard),
        input,
        &settings,
        Bound::Timer(timer),
        crate::remote::MAX_WAIT,
        session.state.clone(),
    );
    if explain {
        eprintln!("{}", crate::explain::render_text(input, &decided));
    }
    if decided.verdict().decision != Decision::Ask {
        session.record(input, &decided, printed_decision(&local));
        return Answered::decided(local, &decided, &guard);
    }
    let body = serde_json::to_value(input).unwrap_or_default();
    let approval = Provenance::layer(Layer::Approval).at(DecidedBy::Approver);
    let mut ask = None;
    let (decision, reason, approver) = match remote::ask_person(server, &body, "hook") {
        RemoteAnswer::Decided {
            allow,
            reason,
            answered_by,
            ask: id,
        } => {
            let decision = if allow { Decision::Allow } else { Decision::Deny };
            let approver = answered_by.unwrap_or_else(|| Approver::Api.to_string());
            ask = id;
            (
                decision,
                reason.trim_start_matches("agent-guard: ").to_owned(),
                approver,
            )
        }
        RemoteAnswer::Expired if on_timeout == OnTimeout::Deny => (
            Decision::Deny,
            "nobody answered the ask on the agent-guard server in time (--on-timeout deny)".to_owned(),
            Approver::Nobody.to_string(),
        ),
        RemoteAnswer::Expired => {
            let output = with_reason(&decided, "nobody answered it on the agent-guard server in time");
            session.record(input, &decided, Decision::Ask);
            return Answered::decided(output, &decided, &guard);
        }
        RemoteAnswer::Unreachable(why) if on_timeout == OnTimeout::Deny => (
            Decision::Deny,
            format!("the agent-guard server cannot be asked ({why}; --on-timeout deny)"),
            Approver::Nobody.to_string(),
        ),
        RemoteAnswer::Unreachable(why) => {
            eprintln!("agent-guard: {why}; the coding agent asks instead");
            let output = with_reason(
                &decided,
                &format!("the agent-guard server cannot be asked: {why}"),
            );
            session.record(input, &decided, Decision::Ask);
            return Answered::decided(output, &decided, &guard);
        }
    };
    decided.resolution.verdict = Verdict::new(decision, reason, approval);
    session.record(input, &decided, decision);
    let mut answered = Answered::decided(
        output(input, &decided, &settings, ask.as_deref()),
        &decided,
        &guard,
    );
    answered.detail.approver = Some(approver);
    answered
}

/// The ask of `decided` with one more reason.
fn with_reason(decided: &Decided, why: &str) -> HookOutput {
    let mut verdict = decided.verdict().clone();
    verdict.reasons.push(why.to_owned());
    HookOutput::from_verdict(&verdict)
}

/// `AGENT_GUARD_FAILPOINT=check` panics before deciding (`decide` panics in agent-decide's deciding thread), so that
/// tests can show a panic blocks the call. Setting it can only make the hook block.
fn failpoint(name: &str) {
    if std::env::var_os("AGENT_GUARD_FAILPOINT").is_some_and(|v| v == name) {
        #[expect(
            clippy::panic,
            reason = "a panic on request, to test that one is caught and blocks the call"
        )]
        {
            panic!("failpoint `{name}` reached");
        }
    }
}

fn settings_deny(why: &str) -> Verdict {
    Verdict::new(
        Decision::Deny,
        format!("cannot load the settings, so nothing is allowed: {why}"),
        Provenance::layer(Layer::Rules),
    )
}

/// The hook output of a decision. An allowed shell call with a confinement runs under the kernel sandbox: its
/// `updatedInput` is the same call wrapped in `agent-guard sandbox` (this very binary, the same settings files).
/// Where this binary's path cannot be known, the allow cannot be backed and becomes an ask. A line allowed to run
/// outside the sandbox ([`Decided::outside`]) has no confinement and runs as written. `ask` is the server's
/// ask a person answered to allow the call: the wrapped line names it (`--approval`), so that the runs `agent-guard
/// undo` records for it name it too and the server's page shows their ids.
fn output(input: &HookInput, decided: &Decided, settings: &[PathBuf], ask: Option<&str>) -> HookOutput {
    let verdict = &decided.resolution.verdict;
    // A search allowed with secret files left out runs narrowed, or not as allowed.
    if verdict.decision == Decision::Allow && !decided.search_excludes.is_empty() {
        return match agent_decide::narrowed_search_input(&input.tool_input, &decided.search_excludes) {
            Some(narrowed) => {
                let mut verdict = verdict.clone();
                verdict.reasons.push(format!(
                    "the secret files by name it would reach are left out of the search (`glob` `{}`)",
                    narrowed
                        .get("glob")
                        .and_then(serde_json::Value::as_str)
                        .unwrap_or_default()
                ));
                HookOutput::from_verdict(&verdict).with_updated_input(narrowed)
            }
            None => HookOutput::from_verdict(&Verdict::new(
                Decision::Ask,
                format!(
                    "the search would be allowed with `{}` left out ({}), but its input cannot be narrowed",
                    decided.search_excludes.join("`, `"),
                    verdict.reason()
                ),
                Provenance::layer(Layer::Sandbox),
            )),
        };
    }
    let Some(confinement) = decided
        .confinement
        .filter(|_| verdict.decision == Decision::Allow)
    else {
        return HookOutput::from_verdict(verdict);
    };
    let wrapped = this_program().and_then(|program| {
        agent_decide::sandboxed_input(
            &input.tool_input,
            program,
            confinement,
            agent_decide::SandboxRoot {
                cwd: &input.cwd,
                project: crate::load::declared_project(),
                undo_held: decided
                    .contained
                    .as_ref()
                    .map_or(&[], |contained| contained.undo_held.as_slice()),
            },
            settings,
            agent_decide::ProxyReach {
                domains: &decided.domains,
                services: &decided.services,
                services_only: decided.services_only,
                session: decided
                    .session_limit
                    .as_ref()
                    .map(|limit| (input.session_id.as_str(), limit)),
            },
        )
        .map(|updated| {
            // Only a `workspace-write` run is recorded by `agent-guard undo`: its runs name the call.
            let call = input
                .tool_use_id
                .as_deref()
                .filter(|_| confinement.profile == SandboxProfile::WorkspaceWrite);
            naming(updated, program, ask, call)
        })
    });
    match wrapped {
        Some(updated) => {
            let mut verdict = verdict.clone();
            verdict
                .reasons
                .push(format!("runs under the kernel sandbox ({confinement})"));
            if let Some(git) = confinement.git_dir() {
                verdict.reasons.push(git.to_owned());
            }
            HookOutput::from_verdict(&verdict).with_updated_input(updated)
        }
        None => HookOutput::from_verdict(&Verdict::new(
            Decision::Ask,
            format!(
                "the command would be allowed ({}), but it cannot be wrapped in the kernel sandbox",
                verdict.reason()
            ),
            Provenance::layer(Layer::Kernel),
        )),
    }
}

/// `updated` (a call `sandboxed_input` wrapped in `PROGRAM sandbox …`) with `--approval ASK` (the server's ask a
/// person answered) and `--call KEY` (the tool call's key) after `sandbox`, each when given.
fn naming(
    mut updated: serde_json::Value,
    program: &Path,
    ask: Option<&str>,
    call: Option<&str>,
) -> serde_json::Value {
    if ask.is_none() && call.is_none() {
        return updated;
    }
    let head = format!(
        "{} sandbox ",
        agent_decide::shell_quote(&program.to_string_lossy())
    );
    if let Some(serde_json::Value::String(line)) = updated.get_mut("command")
        && let Some(rest) = line.strip_prefix(&head)
    {
        let mut named = head.clone();
        if let Some(ask) = ask {
            named.push_str(&format!("--approval {} ", agent_decide::shell_quote(ask)));
        }
        if let Some(call) = call {
            named.push_str(&format!("--call {} ", agent_decide::shell_quote(call)));
        }
        named.push_str(rest);
        *line = named;
    }
    updated
}

/// This binary's path, resolved once per process (`--jsonl` wraps many allowed lines in it).
fn this_program() -> Option<&'static Path> {
    static PROGRAM: OnceLock<Option<PathBuf>> = OnceLock::new();
    PROGRAM
        .get_or_init(|| std::env::current_exe().and_then(std::fs::canonicalize).ok())
        .as_deref()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relative_or_missing_working_directory_is_not_an_input() {
        for bad in [
            r#"{"cwd":".","tool_name":"Bash","tool_input":{}}"#,
            r#"{"cwd":"proj/x","tool_name":"Bash","tool_input":{}}"#,
            r#"{"tool_name":"Bash","tool_input":{}}"#,
            r#"{"cwd":"","tool_name":"Bash","tool_input":{}}"#,
            "",
            "  \n ",
        ] {
            let error = parse_line(bad).unwrap_err().to_string();
            assert!(error.starts_with("invalid hook input: "), "{bad}: {error}");
        }
        assert!(parse_line(r#"{"cwd":"/p","tool_name":"Bash","tool_input":{}}"#).is_ok());
    }

    #[test]
    fn a_call_key_is_its_bits_in_sixteen_hex_digits() {
        for bits in [
            0,
            1,
            0xf,
            0x10,
            0xdead_beef,
            u64::MAX,
            1 << 63,
            0x0123_4567_89ab_cdef,
        ] {
            assert_eq!(call_key(bits), format!("ag-{bits:016x}"));
        }
    }
}
