//! The timer of one hook run (`agent-guard check`): a process timer (`ITIMER_REAL`) whose `SIGALRM` writes a
//! prepared answer and ends the process.
//!
//! The hook is a process per tool call, so what it costs to start matters: a watchdog thread and a deciding
//! thread cost it more than the decision itself (their stacks, their allocator arenas, their start and end). The
//! hook therefore reads, loads and decides on its only thread, and bounds each phase with this timer instead: a
//! stuck read or load ends in exit code 2 with the reason on stderr, a decision past its bound in the deny
//! [`agent_decide::DecisionBound`] gives for it. The answer on stdout and the timer's exclude each other: whoever
//! takes the armed expiry first is the only one to write.
//!
//! Written with `libc` directly: the handler may only use async-signal-safe calls (`write`, `_exit`) and atomics,
//! and `setitimer` has no wrapper in `nix`.

use std::io::Write;
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::time::Duration;

use agent_decide::{Decided, DecisionTimer, HookOutput};
use anyhow::{Context, Result};

/// What happens when the armed timer expires: `text` is written to `fd` and the process exits with `code`.
struct Expiry {
    fd: libc::c_int,
    code: libc::c_int,
    text: Box<[u8]>,
}

/// The armed expiry. Exactly one side takes it: the handler when the timer fires, or [`HookTimer::disarm`];
/// the side that finds it gone knows the other one has.
static ARMED: AtomicPtr<Expiry> = AtomicPtr::new(ptr::null_mut());

/// The hook run's timer. At most one exists per process (the CLI makes it once, in `check`).
pub(crate) struct HookTimer {
    /// Whether this has armed an expiry it has not taken back since.
    armed: bool,
}

impl HookTimer {
    /// Installs the `SIGALRM` handler and arms the timer: unless disarmed within `limit`, `why` (one line) is
    /// printed on stderr and the process exits with code 2, which blocks the call. Where the handler cannot be
    /// installed the hook still answers; it is just not bounded.
    pub(crate) fn start(limit: Duration, why: &str) -> Self {
        install_handler();
        let mut timer = Self { armed: false };
        timer.block_after(limit, why);
        timer
    }

    /// Installs the `SIGALRM` handler with nothing armed, for a process that bounds only what follows its answer
    /// ([`warn_after`](Self::warn_after)).
    pub(crate) fn unarmed() -> Self {
        install_handler();
        Self { armed: false }
    }

    /// Re-arms the timer: past `limit`, `why` on stderr and exit code 2.
    pub(crate) fn block_after(&mut self, limit: Duration, why: &str) {
        let text = format!("agent-guard: {why}\n").into_bytes().into_boxed_slice();
        self.arm_expiry(
            limit,
            Expiry {
                fd: libc::STDERR_FILENO,
                code: 2,
                text,
            },
        );
    }

    /// Re-arms the timer for work after the answer: past `limit`, `why` on stderr and exit code 0, so that the
    /// answer already printed stands.
    pub(crate) fn warn_after(&mut self, limit: Duration, why: &str) {
        let text = format!("agent-guard: {why}\n").into_bytes().into_boxed_slice();
        self.arm_expiry(
            limit,
            Expiry {
                fd: libc::STDERR_FILENO,
                code: 0,
                text,
            },
        );
    }

    /// Disarms the timer, prints `line`, the decision, on stdout and closes stdout, so that a reader has the whole
    /// answer before anything else the process does (the audit row). When the timer has fired meanwhile, its
    /// answer is the process's last word and this never returns.
    pub(crate) fn answer(&mut self, line: &str) -> Result<()> {
        self.take();
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "{line}")
            .and_then(|()| stdout.flush())
            .context("cannot write the decision to stdout")?;
        close_stdout();
        Ok(())
    }

    /// Arms the timer with `expiry`, replacing what was armed.
    fn arm_expiry(&mut self, limit: Duration, expiry: Expiry) {
        self.take();
        ARMED.store(Box::into_raw(Box::new(expiry)), Ordering::Release);
        self.armed = true;
        set_timer(limit);
    }

    /// Stops the timer and takes back what was armed. When the handler has taken it first, the process is
    /// ending with the handler's answer: this thread waits for that.
    #[expect(
        unsafe_code,
        reason = "takes back the `Box` behind `ARMED`; the swap makes this its only holder"
    )]
    fn take(&mut self) {
        set_timer(Duration::ZERO);
        let armed = ARMED.swap(ptr::null_mut(), Ordering::AcqRel);
        if armed.is_null() {
            if self.armed {
                // The handler took it, on another thread (on this one it would not have returned): it is writing
                // the answer and ending the process.
                loop {
                    std::thread::park();
                }
            }
        } else {
            // SAFETY: a non-null `ARMED` is always a pointer from `Box::into_raw` in `arm_expiry`, and the swap made
            // this the only holder of it: the handler only uses a pointer it has swapped out itself.
            drop(unsafe { Box::from_raw(armed) });
        }
        self.armed = false;
    }
}

impl Drop for HookTimer {
    fn drop(&mut self) {
        self.take();
    }
}

impl DecisionTimer for HookTimer {
    /// Past the decision's bound, the deny for it on stdout and exit code 0, exactly the answer a decision
    /// that ended in that deny prints.
    fn arm(&mut self, limit: Duration, past_the_bound: &Decided) {
        let mut text = HookOutput::from_verdict(past_the_bound.verdict()).to_json();
        text.push('\n');
        self.arm_expiry(
            limit,
            Expiry {
                fd: libc::STDOUT_FILENO,
                code: 0,
                text: text.into_bytes().into_boxed_slice(),
            },
        );
    }

    fn disarm(&mut self) {
        self.take();
    }
}

/// Ends the process's stdout: file descriptor 1 is pointed at `/dev/null` (closing it outright would let the next
/// file opened take number 1), so the reader sees the end of the answer while the process goes on.
#[expect(
    unsafe_code,
    reason = "open(2), dup2(2) and close(2) on descriptors this process owns"
)]
pub(crate) fn close_stdout() {
    // SAFETY: the path is a NUL-terminated literal; `dup2` and `close` act on descriptors of this process only, and
    // Rust's `Stdout` keeps no descriptor of its own (it writes to 1, now `/dev/null`).
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if null < 0 {
            libc::close(libc::STDOUT_FILENO);
            return;
        }
        libc::dup2(null, libc::STDOUT_FILENO);
        libc::close(null);
    }
}

/// Sets `ITIMER_REAL` to fire once after `limit`; `Duration::ZERO` stops it. A non-zero limit shorter than a
/// microsecond is a microsecond (zero would stop the timer), and one beyond `i32::MAX` seconds is that.
#[expect(
    unsafe_code,
    reason = "setitimer(2) reads a valid `itimerval` on the stack and is not asked for the old value"
)]
fn set_timer(limit: Duration) {
    let value = if limit.is_zero() {
        libc::timeval {
            tv_sec: 0,
            tv_usec: 0,
        }
    } else {
        let micros = limit.subsec_micros();
        let secs = limit.as_secs().min(i32::MAX as u64);
        libc::timeval {
            tv_sec: libc::time_t::try_from(secs).unwrap_or(libc::time_t::from(i32::MAX)),
            tv_usec: if secs == 0 && micros == 0 {
                1
            } else {
                libc::suseconds_t::from(micros)
            },
        }
    };
    let timer = libc::itimerval {
        it_interval: libc::timeval {
            tv_sec: 0,
            tv_usec: 0,
        },
        it_value: value,
    };
    // SAFETY: `timer` is a valid `itimerval` that outlives the call, and the old value is not asked for.
    unsafe {
        libc::setitimer(libc::ITIMER_REAL, &raw const timer, ptr::null_mut());
    }
}

/// Installs [`expire`] as the `SIGALRM` handler, restarting interrupted system calls (the handler returns only
/// when the expiry has been taken back, and then nothing may fail because of it).
#[expect(
    unsafe_code,
    reason = "sigaction(2) with a handler that calls only async-signal-safe functions"
)]
fn install_handler() {
    // SAFETY: a zeroed `sigaction` is a valid value to fill in; `sigemptyset` initialises its mask; `expire` is an
    // `extern "C" fn(c_int)` that only calls async-signal-safe functions.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = expire as extern "C" fn(libc::c_int) as libc::sighandler_t;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&raw mut action.sa_mask);
        libc::sigaction(libc::SIGALRM, &raw const action, ptr::null_mut());
    }
}

/// The `SIGALRM` handler: takes the armed expiry, writes its text and ends the process with its code. When the
/// expiry has been taken back (the answer is being printed), it does nothing.
#[expect(
    unsafe_code,
    reason = "reads the `Expiry` behind `ARMED` after swapping it out, and calls only write(2) and _exit(2)"
)]
extern "C" fn expire(_signal: libc::c_int) {
    let armed = ARMED.swap(ptr::null_mut(), Ordering::AcqRel);
    if armed.is_null() {
        return;
    }
    // SAFETY: a non-null `ARMED` points to a live `Expiry` (see `HookTimer::take`), now held by this handler
    // alone; it is never freed, as the process ends here.
    let expiry = unsafe { &*armed };
    let mut rest: &[u8] = &expiry.text;
    while !rest.is_empty() {
        // SAFETY: `rest` is a valid byte slice; `write` is async-signal-safe.
        let written = unsafe { libc::write(expiry.fd, rest.as_ptr().cast(), rest.len()) };
        match usize::try_from(written) {
            Ok(n) if n > 0 => rest = rest.get(n..).unwrap_or_default(),
            // Interrupted: try again; anything else: give up on the text, the exit code still blocks.
            _ if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) => {}
            _ => break,
        }
    }
    // SAFETY: `_exit` is async-signal-safe and ends the process without running anything else.
    unsafe { libc::_exit(expiry.code) }
}
