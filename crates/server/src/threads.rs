//! The threads the server decides on. A decision is synchronous and may run up to its bound, so it runs off the
//! runtime's workers; handing it to tokio's blocking pool cost a busy server a fifth of its time in wake-ups of
//! whichever pooled thread had slept longest. Here a job goes to the thread that went idle last, whose caches are
//! the warmest, or to a new thread when none is idle, so a decision never waits behind another (one that runs past
//! its bound keeps its thread, and the next job gets another); a thread idle for [`IDLE_EXIT`] ends.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::Thread;
use std::time::{Duration, Instant};

/// How long a thread waits for a job before it ends.
const IDLE_EXIT: Duration = Duration::from_secs(10);

/// One job: a decision and the sending of its outcome. It must not panic (the server's catch the decision's
/// panic); a job that does ends its thread, and the next job gets another.
pub(crate) type Job = Box<dyn FnOnce() + Send>;

/// The pool. Cloning shares it.
#[derive(Clone, Default)]
pub(crate) struct DecisionThreads {
    /// The idle threads, the one that went idle last at the end.
    idle: Arc<Mutex<Vec<Arc<Slot>>>>,
}

/// Where an idle thread waits for its next job.
struct Slot {
    job: Mutex<Option<Job>>,
    /// Set when a job was put in `job`, before the thread is woken.
    ready: AtomicBool,
    thread: Thread,
}

impl DecisionThreads {
    /// Runs `job` on the thread that went idle last, or on a new one; on this thread when none can be started.
    pub(crate) fn run(&self, job: Job) {
        let slot = lock(&self.idle).pop();
        if let Some(slot) = slot {
            *lock(&slot.job) = Some(job);
            slot.ready.store(true, Ordering::Release);
            slot.thread.unpark();
            return;
        }
        let idle = Arc::clone(&self.idle);
        let job = Arc::new(Mutex::new(Some(job)));
        let handed = Arc::clone(&job);
        let started = std::thread::Builder::new()
            .name("serve-decide".to_owned())
            .spawn(move || {
                let first = lock(&handed).take();
                work(&idle, first);
            });
        if started.is_err() {
            // Without a thread the decision is still better made here than not at all.
            if let Some(job) = lock(&job).take() {
                job();
            }
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A thread's life: its first job, then whatever job comes while it is idle, until it has been idle too long.
fn work(idle: &Mutex<Vec<Arc<Slot>>>, first: Option<Job>) {
    let slot = Arc::new(Slot {
        job: Mutex::new(None),
        ready: AtomicBool::new(false),
        thread: std::thread::current(),
    });
    let mut next = first;
    loop {
        if let Some(job) = next.take() {
            job();
        }
        lock(idle).push(Arc::clone(&slot));
        let deadline = Instant::now() + IDLE_EXIT;
        loop {
            if slot.ready.swap(false, Ordering::AcqRel) {
                next = lock(&slot.job).take();
                break;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if !left.is_zero() {
                // Woken early by a job (or for nothing): the flag says which.
                std::thread::park_timeout(left);
                continue;
            }
            let mut waiting = lock(idle);
            if let Some(at) = waiting.iter().position(|s| Arc::ptr_eq(s, &slot)) {
                waiting.remove(at);
                return;
            }
            // Taken off the idle list just now: its job is on the way.
            drop(waiting);
            std::thread::park();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// Each job runs, the later ones on the thread that went idle, not on new threads.
    #[test]
    fn an_idle_thread_takes_the_next_job() {
        let threads = DecisionThreads::default();
        let (sender, received) = mpsc::channel();
        let mut names = Vec::new();
        for n in 0..20 {
            let sender = sender.clone();
            threads.run(Box::new(move || {
                let _sent = sender.send((n, std::thread::current().id()));
            }));
            let (got, id) = received.recv_timeout(Duration::from_secs(30)).unwrap();
            assert_eq!(got, n);
            names.push(id);
            // The thread goes idle after sending: wait until it is on the list, so the next job finds it.
            let started = Instant::now();
            while lock(&threads.idle).is_empty() {
                assert!(started.elapsed() < Duration::from_secs(30));
                std::thread::yield_now();
            }
        }
        names.dedup();
        assert_eq!(names.len(), 1, "one thread did every job: {names:?}");
    }

    /// A job that does not end does not hold up the next: it gets a thread of its own.
    #[test]
    fn a_job_never_waits_behind_another() {
        let threads = DecisionThreads::default();
        let (release, held) = mpsc::channel::<()>();
        let (sender, received) = mpsc::channel();
        let first = sender.clone();
        threads.run(Box::new(move || {
            let _released = held.recv_timeout(Duration::from_secs(60));
            let _sent = first.send("first");
        }));
        threads.run(Box::new(move || {
            let _sent = sender.send("second");
        }));
        assert_eq!(received.recv_timeout(Duration::from_secs(30)).unwrap(), "second");
        release.send(()).unwrap();
        assert_eq!(received.recv_timeout(Duration::from_secs(30)).unwrap(), "first");
    }
}
