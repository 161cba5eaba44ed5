//! The live events: a numbered log of recent events and a broadcast to the streams that follow it.

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
    ring: Mutex<Ring>,
    sender: broadcast::Sender<Arc<Event>>,
}

#[derive(Debug, Default)]
struct Ring {
    next: u64,
    events: VecDeque<Arc<Event>>,
}

impl EventLog {
    pub(crate) fn new() -> Self {
        let (sender, _) = broadcast::channel(KEPT_EVENTS);
        Self {
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

    /// The number of the last event published here (0 before the first): a stream that resumes after it gets
    /// exactly the events published from now on.
    pub(crate) fn last_id(&self) -> u64 {
        let ring = self.ring.lock().unwrap_or_else(PoisonError::into_inner);
        ring.next.saturating_sub(1)
    }

    /// A receiver of later events and the kept events numbered after `after`, taken together so that none falls
    /// between them.
    pub(crate) fn follow(&self, after: u64) -> (Vec<Arc<Event>>, broadcast::Receiver<Arc<Event>>) {
        let ring = self.ring.lock().unwrap_or_else(PoisonError::into_inner);
        let receiver = self.sender.subscribe();
        let backlog = ring.events.iter().filter(|e| e.id > after).cloned().collect();
        (backlog, receiver)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_in_order_and_resumable() {
        let log = EventLog::new();
        log.publish(EventKind::Decision, "s", serde_json::json!({"n": 1}));
        let (backlog, mut receiver) = log.follow(0);
        log.publish(EventKind::PermissionRequest, "s", serde_json::json!({"n": 2}));
        assert_eq!(backlog.iter().map(|e| e.id).collect::<Vec<_>>(), [1]);
        assert_eq!(receiver.try_recv().unwrap().id, 2);
        assert_eq!(log.follow(1).0.len(), 1);
        for _ in 0..KEPT_EVENTS {
            log.publish(EventKind::Decision, "s", Value::Null);
        }
        let (kept, _) = log.follow(0);
        assert_eq!(kept.len(), KEPT_EVENTS);
        assert_eq!(kept.first().unwrap().id, 3);
        assert_eq!(EventKind::parse("decision"), Some(EventKind::Decision));
    }
}
