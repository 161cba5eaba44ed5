//! The live events: a numbered log of recent events and a broadcast to the streams that follow it. An event's id
//! names the run of the server it comes from (`INSTANCE-N`), so a client that resumes after a restart, or after
//! the events it missed were dropped, is told to read the state again instead of silently missing events.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use serde::Serialize;
use serde_json::Value;
use tokio::sync::broadcast;

/// How many recent events a reconnecting stream can resume from.
pub(crate) const KEPT_EVENTS: usize = 4096;

/// What happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum EventKind {
    /// An ask entered the queue.
    PermissionRequest,
    /// An ask was answered or expired.
    PermissionResolved,
    /// A call was decided (`POST /v1/decide`).
    Decision,
    /// A call of a session run by the server starts its way through the runtime.
    ToolStart,
    /// A call of such a session ended (ran, failed or was denied).
    ToolResult,
    /// A step of such a session is complete.
    Step,
    /// Such a session stopped.
    SessionStop,
}

impl EventKind {
    pub(crate) const fn as_str(self) -> &'static str {
        match self {
            Self::PermissionRequest => "permission_request",
            Self::PermissionResolved => "permission_resolved",
            Self::Decision => "decision",
            Self::ToolStart => "tool_start",
            Self::ToolResult => "tool_result",
            Self::Step => "step",
            Self::SessionStop => "session_stop",
        }
    }

    pub(crate) fn parse(text: &str) -> Option<Self> {
        [
            Self::PermissionRequest,
            Self::PermissionResolved,
            Self::Decision,
            Self::ToolStart,
            Self::ToolResult,
            Self::Step,
            Self::SessionStop,
        ]
        .into_iter()
        .find(|kind| kind.as_str() == text)
    }
}

/// One event: its number on this server, its kind, the session it belongs to and its JSON object.
#[derive(Debug, Clone)]
pub(crate) struct Event {
    pub(crate) id: u64,
    pub(crate) kind: EventKind,
    pub(crate) session: String,
    pub(crate) data: Value,
}

/// The numbered events of this server: the last [`KEPT_EVENTS`] kept for resuming, every new one broadcast.
#[derive(Debug)]
pub(crate) struct EventLog {
    /// This run of the server, the prefix of every event id.
    instance: String,
    ring: Mutex<Ring>,
    sender: broadcast::Sender<Arc<Event>>,
}

#[derive(Debug, Default)]
struct Ring {
    next: u64,
    events: VecDeque<Arc<Event>>,
}

/// Where a stream starts: the kept events it resumes with and the receiver of the later ones, or why the client
/// must read the state again.
pub(crate) struct Follow {
    /// The kept events after the client's last one.
    pub(crate) backlog: Vec<Arc<Event>>,
    /// Every later event.
    pub(crate) receiver: broadcast::Receiver<Arc<Event>>,
    /// The number of the newest event when the stream started, or of the client's last one when it resumes: the
    /// stream sends only events numbered after it.
    pub(crate) after: u64,
    /// Why the client cannot resume from its last event id, when it cannot.
    pub(crate) resync: Option<&'static str>,
}

impl EventLog {
    pub(crate) fn new(instance: &str) -> Self {
        let (sender, _) = broadcast::channel(KEPT_EVENTS);
        Self {
            instance: instance.to_owned(),
            ring: Mutex::new(Ring {
                next: 1,
                events: VecDeque::new(),
            }),
            sender,
        }
    }

    /// Numbers `data` and hands it to every stream. Numbering and sending happen under one lock, so streams see
    /// events in the order of their numbers.
    pub(crate) fn publish(&self, kind: EventKind, session: &str, data: Value) {
        let mut ring = self.ring.lock().unwrap_or_else(PoisonError::into_inner);
        let event = Arc::new(Event {
            id: ring.next,
            kind,
            session: session.to_owned(),
            data,
        });
        ring.next += 1;
        if ring.events.len() == KEPT_EVENTS {
            ring.events.pop_front();
        }
        ring.events.push_back(Arc::clone(&event));
        // No stream listening is not an error.
        let _receivers = self.sender.send(event);
    }

    /// The id of the event numbered `number`, as streams send it.
    pub(crate) fn id(&self, number: u64) -> String {
        format!("{}-{number}", self.instance)
    }

    /// The number of the newest event (0 before the first).
    pub(crate) fn newest(&self) -> u64 {
        let ring = self.ring.lock().unwrap_or_else(PoisonError::into_inner);
        ring.next.saturating_sub(1)
    }

    /// A stream's start for a client whose last event id is `last_event_id`: without one, the events from now on;
    /// with one of this run that is still kept or just before the kept ones, the kept events after it; with one of
    /// another run (the server restarted), or one whose successors are no longer kept, or text that is no id,
    /// the events from now on and the reason to read the state again. The kept events and the receiver are taken
    /// together, so that no event falls between them.
    pub(crate) fn follow(&self, last_event_id: Option<&str>) -> Follow {
        let ring = self.ring.lock().unwrap_or_else(PoisonError::into_inner);
        let receiver = self.sender.subscribe();
        let newest = ring.next.saturating_sub(1);
        let from_now = |resync| Follow {
            backlog: Vec::new(),
            receiver: self.sender.subscribe(),
            after: newest,
            resync,
        };
        let Some(text) = last_event_id.map(str::trim).filter(|t| !t.is_empty()) else {
            return Follow {
                receiver,
                ..from_now(None)
            };
        };
        let number = text
            .rsplit_once('-')
            .filter(|(instance, _)| *instance == self.instance)
            .and_then(|(_, number)| number.parse::<u64>().ok());
        let Some(number) = number else {
            return from_now(Some(
                "the last event id is not one of this server's run: it restarted since, or the id is not one it sent",
            ));
        };
        let oldest = ring.events.front().map_or(ring.next, |e| e.id);
        if number > newest || number.saturating_add(1) < oldest {
            return from_now(Some("the events after the last event id are no longer kept"));
        }
        let backlog = ring.events.iter().filter(|e| e.id > number).cloned().collect();
        Follow {
            backlog,
            receiver,
            after: number,
            resync: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_in_order_and_resumable() {
        let log = EventLog::new("run1");
        let fresh = log.follow(Some("run1-0"));
        assert!(fresh.resync.is_none() && fresh.backlog.is_empty());
        log.publish(EventKind::Decision, "s", serde_json::json!({"n": 1}));
        let mut follow = log.follow(Some("run1-0"));
        log.publish(EventKind::PermissionRequest, "s", serde_json::json!({"n": 2}));
        assert_eq!(follow.backlog.iter().map(|e| e.id).collect::<Vec<_>>(), [1]);
        assert_eq!(follow.receiver.try_recv().unwrap().id, 2);
        assert_eq!(log.follow(Some(&log.id(1))).backlog.len(), 1);
        // Without an id: only what comes next.
        let now = log.follow(None);
        assert!(now.backlog.is_empty() && now.resync.is_none());
        assert_eq!(now.after, 2);
        for _ in 0..KEPT_EVENTS {
            log.publish(EventKind::Decision, "s", Value::Null);
        }
        let kept = log.follow(Some("run1-2"));
        assert_eq!(kept.backlog.len(), KEPT_EVENTS);
        assert_eq!(kept.backlog.first().unwrap().id, 3);
        assert_eq!(EventKind::parse("decision"), Some(EventKind::Decision));
    }

    /// Every id the server cannot continue from asks for a re-read, and the stream starts at the newest event.
    #[test]
    fn ids_it_cannot_resume_from_ask_for_a_resync() {
        let log = EventLog::new("run2");
        for _ in 0..KEPT_EVENTS + 10 {
            log.publish(EventKind::Decision, "s", Value::Null);
        }
        let newest = log.newest();
        for id in [
            "run1-5",
            "5",
            "run2-",
            "run2-x",
            "run2-1",
            "run2-9",
            &log.id(newest + 1),
            "-",
            "run2-5-1",
        ] {
            let follow = log.follow(Some(id));
            assert!(follow.resync.is_some(), "{id}");
            assert!(follow.backlog.is_empty(), "{id}");
            assert_eq!(follow.after, newest, "{id}");
        }
        assert!(log.follow(Some("run2-10")).resync.is_none());
    }
}
