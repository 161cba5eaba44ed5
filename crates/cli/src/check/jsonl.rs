//! `agent-guard check --jsonl`: many hook inputs in one process, read, decided and answered in batches on three
//! threads.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender};
use std::time::{Duration, Instant};

use agent_decide::{
    CallInput, Decided, Deciders, DecisionBound, DecisionRequest, Guard, HookInput, HookOutput, InOrder,
};
use agent_rules::SessionState;
use anyhow::{Context, Result, bail};

use super::{Answered, MAX_INPUT, output, parse_line};
use crate::DecideArgs;
use crate::hook_audit::{self, BatchLog};
use crate::load::Guards;

/// `--jsonl`: one output line per input line, in order; a line that is not a valid input gets `{"error":…}` in its
/// place and the exit code is 1. The lines are decided in batches: each batch is one line, waited for, and every
/// further line already read (up to [`MAX_BATCH`]), so a caller that writes a line and waits for its answer gets it,
/// and a stream of lines is handed to agent-decide's bounded entry a batch at a time instead of a line at a time.
/// Three threads pass the batches on in order: one reads and parses the lines and finds each line's guard
/// ([`read_lines`]), this one has the batch decided, each decision made into its answer on the worker that decided
/// it ([`Rendering::render`]), and one writes the answers and hands their audit rows over ([`write_answers`]); so
/// the next batch is read and made ready and the last one written while one is decided, and the workers wait for
/// nothing between two batches but the hand-over.
pub(super) fn run_jsonl(args: &DecideArgs, explain: bool) -> Result<ExitCode> {
    let guards = Guards::owning(args.clone())?;
    let (batches, writing) = std::sync::mpsc::sync_channel::<DecidedBatch>(BATCHES_WAITING);
    let log = BatchLog::new();
    let rendering = Rendering {
        settings: guards.settings_files().into(),
        explain,
        logged: log.keeps_rows(),
    };
    let (ready, lines) = std::sync::mpsc::sync_channel::<ReadBatch>(BATCHES_WAITING);
    std::thread::Builder::new()
        .name("jsonl-lines".to_owned())
        .spawn(move || read_lines(&ready, guards))
        .context("cannot start the thread that reads the lines")?;
    let writer = std::thread::Builder::new()
        .name("jsonl-answers".to_owned())
        .spawn(move || write_answers(&writing, log))
        .context("cannot start the thread that writes the answers")?;
    let ended = decide_batches(&lines, &batches, &rendering);
    drop(batches);
    match writer.join() {
        Ok(written) => written?,
        Err(_) => bail!("the thread that writes the answers failed"),
    }
    // The answers to the lines before a read error are written first; the error is then the run's.
    if let Some(e) = ended.unread {
        return Err(e);
    }
    Ok(if ended.failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// This thread's part of [`run_jsonl`]: each batch the reader made ready, handed over to be decided, its answers
/// handed to the writer, until the reader ends (at the end of the input, or with the error that ended reading, which
/// is returned) or the writer does. The next batch is handed over as soon as the one before is decided, and the
/// answers of that one handed on while it is decided; where no further batch was read yet, the answers are handed
/// on first, so that a caller who waits for them before writing more gets them.
fn decide_batches(
    lines: &Receiver<ReadBatch>,
    answers: &SyncSender<DecidedBatch>,
    rendering: &Rendering,
) -> Ended {
    let mut failed = false;
    // Decided, and to be handed on once the next batch is handed over.
    let mut last = None;
    let mut next = lines.recv().ok();
    while let Some(batch) = next.take() {
        let batch = match batch {
            Ok(batch) => batch,
            Err(e) => {
                if let Some(done) = last.take() {
                    let _ = answers.send(done);
                }
                return Ended {
                    failed,
                    unread: Some(e),
                };
            }
        };
        let started = Instant::now();
        let handed = hand_over_batch(batch, rendering);
        // The writer ends early only when it cannot write: its error is the run's.
        if last.take().is_some_and(|done| answers.send(done).is_err()) {
            break;
        }
        next = lines.try_recv().ok();
        let mut decided = handed.wait(rendering);
        decided.elapsed = started.elapsed();
        failed |= decided
            .lines
            .iter()
            .any(|line| matches!(line, Pending::Answered(answer) if answer.is_err()));
        if next.is_some() {
            last = Some(decided);
        } else if answers.send(decided).is_ok() {
            next = lines.recv().ok();
        }
    }
    if let Some(done) = last {
        let _ = answers.send(done);
    }
    Ended { failed, unread: None }
}

/// How [`decide_batches`] ended: whether a line was not a valid input, and the error that ended reading.
struct Ended {
    failed: bool,
    unread: Option<anyhow::Error>,
}

/// One batch of lines made ready to decide ([`ReadyBatch`]), or the error that ended reading.
type ReadBatch = Result<ReadyBatch>;

/// One line of `--jsonl` input, parsed: its input, or the error that says why it is not one (`line N: …`).
type Parsed = Result<HookInput, String>;

/// One batch, decided: its lines, the inputs of those that were decided and their answers (both in order), and
/// how long deciding it took.
struct DecidedBatch {
    lines: Vec<Pending>,
    deciding: Arc<Vec<Deciding>>,
    rendered: Vec<Rendered>,
    elapsed: Duration,
}

/// A line to decide: its input and the guard that decides it.
struct Deciding {
    input: HookInput,
    guard: Arc<Guard>,
}

/// One batch of lines ready to decide: each line in order, to be decided or already answered ([`Pending`]), the
/// requests of those to be decided and their inputs, in order.
struct ReadyBatch {
    lines: Vec<Pending>,
    requests: Vec<DecisionRequest>,
    deciding: Vec<Deciding>,
}

/// One batch handed over to be decided ([`hand_over_batch`]).
struct HandedBatch {
    lines: Vec<Pending>,
    deciding: Arc<Vec<Deciding>>,
    answers: InOrder<Rendered>,
    bound: DecisionBound,
}

/// What a decision becomes on the thread that made it: the line's answer, and with `--explain` the explanation
/// printed before it.
struct Rendered {
    answer: Answer,
    explained: Option<String>,
}

/// A decided line's answer, made on the worker that decided it.
enum Answer {
    /// The answer's line, serialised where it was decided: a line without an audit row or telemetry, whose output
    /// is freed there, where it was allocated, and not by the writer on another core.
    Line(Vec<u8>),
    /// The answer with what its audit row records, serialised by the writer.
    Answered(Box<Answered>),
}

/// How a decision is made into its answer ([`Rendering::render`]), the same for every line of a run.
struct Rendering {
    /// The settings files named in a deny's advice.
    settings: Arc<[PathBuf]>,
    explain: bool,
    /// Whether the audit log keeps rows, which need what an answer records beside its line.
    logged: bool,
}

/// How many batches may wait between two of `--jsonl`'s threads before the one that hands them on waits.
const BATCHES_WAITING: usize = 2;

/// `--jsonl`'s reader: the batches of stdin ([`next_batch`]), each line parsed and given its guard ([`ready`]),
/// until the end of the input or an error reading it (sent as the last batch).
fn read_lines(ready_batches: &SyncSender<ReadBatch>, mut guards: Guards<'static>) {
    let stdin = std::io::stdin();
    let mut reader = BufReader::with_capacity(BATCH_BUFFER, stdin.lock());
    let mut number = 0_usize;
    loop {
        let batch = match next_batch(&mut reader, &mut number) {
            Ok(batch) if batch.is_empty() => return,
            Ok(batch) => Ok(ready(
                &mut guards,
                batch
                    .into_iter()
                    .map(|(number, line)| parse_numbered(number, line)),
            )),
            Err(e) => Err(e),
        };
        let last = batch.is_err();
        if ready_batches.send(batch).is_err() || last {
            return;
        }
    }
}

/// Line `number` of the input parsed: an empty line gets its error too, so that output line N answers input
/// line N.
fn parse_numbered(number: usize, line: Line) -> Parsed {
    let input = match line {
        Line::Text(text) if text.trim().is_empty() => {
            Err(anyhow::anyhow!("invalid hook input: the line is empty"))
        }
        Line::Text(text) => parse_line(&text),
        Line::TooLong => Err(anyhow::anyhow!(
            "invalid hook input: longer than {} MiB",
            MAX_INPUT >> 20
        )),
        Line::NotUtf8(at) => Err(anyhow::anyhow!("invalid hook input: not UTF-8 text (byte {at})")),
    };
    input.map_err(|e| format!("line {number}: {e:#}"))
}

/// `--jsonl`'s writer: each batch's answers in order, with their explanations on stderr under `--explain`,
/// flushed, then its rows handed to the audit log's writing thread and to the telemetry sender (one for the run);
/// the log and the sender finish when the batches end.
fn write_answers(batches: &Receiver<DecidedBatch>, mut log: BatchLog) -> Result<()> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut sender = crate::telemetry::Sender::default();
    let mut written = Ok(());
    for batch in batches {
        let answers = answers(&batch);
        written = write_batch(&mut out, &answers);
        if written.is_err() {
            break;
        }
        let recorded = answers.iter().filter_map(|answer| match answer {
            LineAnswer::Answered(input, answered) => Some((input, answered)),
            LineAnswer::Line(_) | LineAnswer::Error(_) => None,
        });
        for (input, answered) in recorded {
            let telemetry = answered.telemetry.as_ref().filter(|t| t.enabled);
            if telemetry.is_none() && !log.keeps_rows() {
                continue;
            }
            let row = answered
                .audit(batch.elapsed)
                .row(&(*input).into(), hook_audit::CHECK_AGENT);
            if let Some(settings) = telemetry {
                sender.send(settings, &row);
            }
            log.add((*input).into(), row);
        }
        log.write();
    }
    log.finish();
    sender.finish();
    written
}

/// One batch's answer lines, flushed.
fn write_batch(out: &mut impl Write, answers: &Answers<'_>) -> Result<()> {
    for answer in answers {
        match answer {
            LineAnswer::Line(line) => out.write_all(line)?,
            // Serialised straight into the buffer, the same bytes as `HookOutput::to_json`.
            LineAnswer::Answered(_, answered) => {
                serde_json::to_writer(&mut *out, &answered.output)?;
                out.write_all(b"\n")?;
            }
            LineAnswer::Error(error) => writeln!(out, "{}", serde_json::json!({ "error": error }))?,
        }
    }
    out.flush()?;
    Ok(())
}

/// The most `--jsonl` lines decided in one batch.
const MAX_BATCH: usize = 1024;

/// The size of `--jsonl`'s input buffer: a batch is what it holds (up to [`MAX_BATCH`]), about a thousand typical
/// lines. Each worker learns the file system's facts again for each batch, so a larger batch asks the kernel less a
/// line (128 KiB against 64 KiB: 15 % fewer system calls over all30.jsonl), at the cost of more memory live while
/// it is decided.
const BATCH_BUFFER: usize = 1 << 17;

/// The next batch of `--jsonl` lines with their numbers (`number` counts them): the next line, waited for, and
/// every further complete line the reader already holds, up to [`MAX_BATCH`], blank ones included (each gets its
/// error line, so that output line N answers input line N). Empty at
/// the end of the input.
fn next_batch<R: Read>(reader: &mut BufReader<R>, number: &mut usize) -> Result<Vec<(usize, Line)>> {
    let mut batch = Vec::new();
    while batch.len() < MAX_BATCH && (batch.is_empty() || reader.buffer().contains(&b'\n')) {
        let read = next_line(reader).with_context(|| format!("cannot read line {} of stdin", *number + 1))?;
        let Some(line) = read else { break };
        *number += 1;
        batch.push((*number, line));
    }
    Ok(batch)
}

/// One line of a batch, to be decided or already answered.
enum Pending {
    /// Answered without a decision: the line is not an input (the error), or its settings cannot be loaded. Boxed:
    /// such lines are rare, and every line of a batch would otherwise be as large as an answer.
    Answered(Box<Result<(HookInput, Answered), String>>),
    /// Decided by the next decision of the batch.
    Deciding,
}

/// Each line of `batch` in order, to be decided or answered where it has no decision (not an input, or its
/// settings cannot be loaded), with the requests of the lines to be decided: each input decided as
/// [`decide_hook_input`](super::decide_hook_input) decides one, by the guard of its working directory and mode.
fn ready(guards: &mut Guards<'_>, batch: impl ExactSizeIterator<Item = Parsed>) -> ReadyBatch {
    let mut ready = ReadyBatch {
        lines: Vec::with_capacity(batch.len()),
        requests: Vec::with_capacity(batch.len()),
        deciding: Vec::with_capacity(batch.len()),
    };
    for input in batch {
        let input = match input {
            Ok(input) => input,
            Err(e) => {
                ready.lines.push(Pending::Answered(Box::new(Err(e))));
                continue;
            }
        };
        match guards.get(&input.cwd, input.permission_mode.as_deref()) {
            Ok(guard) => {
                ready.requests.push(DecisionRequest {
                    deciders: Deciders::new(Arc::clone(guard)),
                    call: CallInput::new(input.tool_name.as_str(), input.tool_input.clone()),
                    session: SessionState::default(),
                });
                ready.deciding.push(Deciding {
                    input,
                    guard: Arc::clone(guard),
                });
                ready.lines.push(Pending::Deciding);
            }
            Err(why) => ready.lines.push(Pending::Answered(Box::new(Ok((
                input,
                Answered::settings_deny(why),
            ))))),
        }
    }
    ready
}

/// `batch`'s lines to be decided, handed over to agent-decide's bounded entry together, each decision to be made
/// into its answer on the worker that made it ([`Rendering::render`]).
fn hand_over_batch(batch: ReadyBatch, rendering: &Rendering) -> HandedBatch {
    let ReadyBatch {
        lines,
        requests,
        deciding,
    } = batch;
    let deciding = Arc::new(deciding);
    let bound = DecisionBound::from_env();
    let answers = {
        let deciding = Arc::clone(&deciding);
        let rendering = rendering.clone();
        bound.hand_over_in_order(requests, move |index, decided| {
            rendering.render(deciding.get(index), &decided)
        })
    };
    HandedBatch {
        lines,
        deciding,
        answers,
        bound,
    }
}

impl HandedBatch {
    /// The batch decided: the answers of its lines to be decided, in order.
    fn wait(self, rendering: &Rendering) -> DecidedBatch {
        let mut rendered = self.answers.wait();
        // The bounded entry answers every request; were one missing, it would not be allowed.
        for line in self.deciding.get(rendered.len()..).unwrap_or_default() {
            rendered.push(rendering.render(Some(line), &self.bound.past_the_bound(&line.input.tool_name)));
        }
        DecidedBatch {
            lines: self.lines,
            deciding: self.deciding,
            rendered,
            elapsed: Duration::ZERO,
        }
    }
}

impl Rendering {
    /// The answer to `line` from its decision (a line the index of a request always finds: the deny of its
    /// bound otherwise).
    fn render(&self, line: Option<&Deciding>, decided: &Decided) -> Rendered {
        let Some(Deciding { input, guard }) = line else {
            return Rendered {
                answer: Answer::Answered(Box::new(Answered::without_row(HookOutput::from_verdict(
                    DecisionBound::from_env().past_the_bound("").verdict(),
                )))),
                explained: None,
            };
        };
        let output = output(input, decided, &self.settings, None);
        // What an audit row records is built only for a line that has one: with the log off and telemetry off for
        // the line's settings, the row is never made ([`write_answers`]).
        let answer = if self.logged || guard.telemetry().enabled {
            Answer::Answered(Box::new(Answered::decided(output, decided, guard)))
        } else {
            line_of(output)
        };
        Rendered {
            answer,
            explained: self.explain.then(|| crate::explain::render_text(input, decided)),
        }
    }
}

impl Clone for Rendering {
    fn clone(&self) -> Self {
        Self {
            settings: Arc::clone(&self.settings),
            explain: self.explain,
            logged: self.logged,
        }
    }
}

/// The line of an answer without an audit row, serialised (the same bytes as `HookOutput::to_json` and a newline);
/// the writer serialises an output that cannot be.
fn line_of(output: HookOutput) -> Answer {
    let mut line = Vec::with_capacity(LINE_CAPACITY);
    match serde_json::to_writer(&mut line, &output) {
        Ok(()) => {
            line.push(b'\n');
            Answer::Line(line)
        }
        Err(_) => Answer::Answered(Box::new(Answered::without_row(output))),
    }
}

/// Room for a typical answer line (an allowed shell line wrapped in the sandbox is some hundreds of bytes), so that
/// serialising it rarely grows the buffer.
const LINE_CAPACITY: usize = 512;

/// One batch's answers, in order.
type Answers<'a> = Vec<LineAnswer<'a>>;

/// One line's answer as the writer writes it.
enum LineAnswer<'a> {
    /// Serialised where it was decided.
    Line(&'a [u8]),
    /// The line's input and answer, with what its audit row records.
    Answered(&'a HookInput, &'a Answered),
    /// The error that says why the line is not an input.
    Error(&'a str),
}

/// The answer to each line of a decided batch, in order, with the explanations of the decided ones printed on
/// stderr first under `--explain`.
fn answers(batch: &DecidedBatch) -> Answers<'_> {
    let mut decided = batch.deciding.iter().zip(&batch.rendered);
    batch
        .lines
        .iter()
        .filter_map(|line| match line {
            Pending::Answered(answer) => Some(match answer.as_ref() {
                Ok((input, answered)) => LineAnswer::Answered(input, answered),
                Err(e) => LineAnswer::Error(e.as_str()),
            }),
            Pending::Deciding => {
                // One answer for each line decided ([`HandedBatch::wait`]), in order.
                let (line, rendered) = decided.next()?;
                if let Some(explained) = &rendered.explained {
                    eprintln!("{explained}");
                }
                Some(match &rendered.answer {
                    Answer::Line(bytes) => LineAnswer::Line(bytes),
                    Answer::Answered(answered) => LineAnswer::Answered(&line.input, answered),
                })
            }
        })
        .collect()
}

/// One line of `--jsonl` input.
enum Line {
    Text(String),
    /// Longer than [`MAX_INPUT`]; the rest of it was skipped.
    TooLong,
    /// Not UTF-8 from this byte on.
    NotUtf8(usize),
}

/// The next line of `reader` without its newline, reading at most [`MAX_INPUT`] bytes of it; `None` at the end.
fn next_line(reader: &mut impl BufRead) -> std::io::Result<Option<Line>> {
    let mut bytes = Vec::new();
    let read = reader
        .by_ref()
        .take(MAX_INPUT as u64 + 1)
        .read_until(b'\n', &mut bytes)?;
    if read == 0 {
        return Ok(None);
    }
    if bytes.last() == Some(&b'\n') {
        bytes.pop();
    } else if bytes.len() > MAX_INPUT {
        skip_line(reader)?;
        return Ok(Some(Line::TooLong));
    }
    Ok(Some(match String::from_utf8(bytes) {
        Ok(text) => Line::Text(text),
        Err(e) => Line::NotUtf8(e.utf8_error().valid_up_to()),
    }))
}

/// Skips the rest of the current line, newline included, without holding it in memory.
fn skip_line(reader: &mut impl BufRead) -> std::io::Result<()> {
    loop {
        let buffer = reader.fill_buf()?;
        if buffer.is_empty() {
            return Ok(());
        }
        match buffer.iter().position(|&b| b == b'\n') {
            Some(at) => {
                reader.consume(at + 1);
                return Ok(());
            }
            None => {
                let all = buffer.len();
                reader.consume(all);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &[u8]) -> Vec<String> {
        let mut reader = std::io::BufReader::with_capacity(7, text);
        let mut out = Vec::new();
        while let Some(line) = next_line(&mut reader).unwrap() {
            out.push(match line {
                Line::Text(t) => t,
                Line::TooLong => "<too long>".to_owned(),
                Line::NotUtf8(at) => format!("<not utf-8 at {at}>"),
            });
        }
        out
    }

    #[test]
    fn lines_are_bounded_and_checked_one_by_one() {
        let mut text = b"a\n\xff\xfe\nb".to_vec();
        text.extend(std::iter::repeat_n(b'x', MAX_INPUT + 10));
        text.extend(b"\nc\n");
        assert_eq!(lines(&text), ["a", "<not utf-8 at 0>", "<too long>", "c"]);
        let exact = [vec![b'y'; MAX_INPUT], b"\nz".to_vec()].concat();
        assert_eq!(lines(&exact).len(), 2);
        assert_eq!(lines(&exact)[1], "z");
    }
}
