//! Session taint: what a session has been exposed to (untrusted content, private data, the domains it reached),
//! as a value its owner keeps and passes in, and what one call adds to it.

use agent_tool_traits::Decision;
use serde::{Deserialize, Serialize};

/// The most domains a session's record keeps; past it, the oldest are forgotten (a forgotten domain is a new one
/// again: stricter, never looser).
const MAX_CONTACTED: usize = 256;

/// The longest description of a call a mark keeps, in characters.
const MAX_CALL_CHARS: usize = 160;

/// One call that brought a kind of taint into a session: the call, shortened, and why it counts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaintMark {
    /// The call as a person recognises it: `WebFetch https://…`, `Bash: cat ~/.ssh/config`.
    pub call: String,
    /// Why it counts: `fetched a page of example.com`, `read a secret file (…)`.
    pub why: String,
}

impl TaintMark {
    /// A mark for `call`, shortened to a line, because `why`.
    pub fn new(call: &str, why: impl Into<String>) -> Self {
        Self {
            call: one_line(call),
            why: why.into(),
        }
    }
}

/// The words of `call` joined by single spaces, cut after [`MAX_CALL_CHARS`] characters with `…`. Joined only up to
/// the cut: a long call (a here-document, a script) is not joined whole to be cut.
fn one_line(call: &str) -> String {
    let mut line = String::new();
    let mut chars = 0;
    for word in call.split_whitespace() {
        let space = usize::from(!line.is_empty());
        let length = word.chars().count();
        if chars + space + length <= MAX_CALL_CHARS {
            if space == 1 {
                line.push(' ');
            }
            line.push_str(word);
            chars += space + length;
            continue;
        }
        // The word that passes the limit: its characters up to it, then the mark of the cut.
        for c in [' '].into_iter().take(space).chain(word.chars()) {
            if chars == MAX_CALL_CHARS {
                break;
            }
            line.push(c);
            chars += 1;
        }
        line.push('…');
        break;
    }
    line
}

/// What a session has been exposed to: the first call that brought untrusted content in, the first that read
/// private data, and the domains its calls reached. Once both marks are set, the session holds two legs of the
/// lethal trifecta, and every way out asks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct SessionTaint {
    /// The first call that brought untrusted content into the session (a web page, a download, an external tool).
    pub untrusted: Option<TaintMark>,
    /// The first call that read private data (a secret, a file outside the project, the environment).
    pub private: Option<TaintMark>,
    /// The domains the session's allowed calls reached, lowercase, oldest first, at most `MAX_CONTACTED`.
    pub contacted: Vec<String>,
}

/// What one call adds to its session's taint: the decision reports it beside the verdict, and the caller records
/// it ([`SessionTaint::record`]) for a call it lets run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TaintFacts {
    /// The call brings untrusted content into the session.
    pub untrusted: Option<TaintMark>,
    /// The call reads private data.
    pub private: Option<TaintMark>,
    /// The domains the call reaches, lowercase.
    pub contacted: Vec<String>,
}

impl TaintFacts {
    /// Whether the call adds nothing: the caller then has nothing to write.
    pub fn is_empty(&self) -> bool {
        self.untrusted.is_none() && self.private.is_none() && self.contacted.is_empty()
    }
}

impl SessionTaint {
    /// Whether the session has seen neither untrusted content nor private data.
    pub fn is_clean(&self) -> bool {
        self.untrusted.is_none() && self.private.is_none()
    }

    /// Whether the session has seen both untrusted content and private data: every sink asks.
    pub fn is_trifecta(&self) -> bool {
        self.untrusted.is_some() && self.private.is_some()
    }

    /// The taint in one line, as the audit log records a cleared one: `untrusted content: `WebFetch …` (fetched a
    /// page of …); private data: none; 2 domains reached`.
    pub fn summary(&self) -> String {
        let mark = |mark: &Option<TaintMark>| {
            mark.as_ref()
                .map_or_else(|| "none".to_owned(), |m| format!("`{}` ({})", m.call, m.why))
        };
        format!(
            "untrusted content: {}; private data: {}; {} domain{} reached",
            mark(&self.untrusted),
            mark(&self.private),
            self.contacted.len(),
            if self.contacted.len() == 1 { "" } else { "s" }
        )
    }

    /// Whether the session has reached `domain` (lowercase) before.
    pub fn has_contacted(&self, domain: &str) -> bool {
        self.contacted.iter().any(|d| d == domain)
    }

    /// Records what a call decided `decision` adds. A denied call adds nothing (it does not run). A call that
    /// may run, allowed or asked (the person may say yes where agent-guard does not hear it), adds its marks; the
    /// first mark of each kind stays. Its domains count as reached only when it was allowed: a domain recorded for
    /// a call that never ran would make a later call to it look familiar.
    pub fn record(&mut self, facts: &TaintFacts, decision: Decision) {
        if decision == Decision::Deny {
            return;
        }
        if self.untrusted.is_none() {
            self.untrusted.clone_from(&facts.untrusted);
        }
        if self.private.is_none() {
            self.private.clone_from(&facts.private);
        }
        if decision == Decision::Allow {
            for domain in &facts.contacted {
                if !self.has_contacted(domain) {
                    self.contacted.push(domain.clone());
                }
            }
            let excess = self.contacted.len().saturating_sub(MAX_CONTACTED);
            self.contacted.drain(..excess);
        }
    }

    /// Merges `other`, another copy of the same session's record (a parallel call's): marks already set stay,
    /// domains are united.
    pub fn merge(&mut self, other: &Self) {
        let facts = TaintFacts {
            untrusted: other.untrusted.clone(),
            private: other.private.clone(),
            contacted: other.contacted.clone(),
        };
        self.record(&facts, Decision::Allow);
    }
}

/// Where the taint of a session lives: the one place its decisions read it from, its calls add to it, and a person
/// clears it. The hook keeps it in a file per session in the project's `.agent-guard/sessions/` (so that one
/// session's separate `check` processes share it), the runtime in memory with the session ([`TaintInMemory`]) or in
/// those files (`agent-guard agent`, so that `session show|clear` and the server's page reach it), the server the
/// taint of the sessions it runs in its own memory. Whoever shows or clears a session's taint asks its keeper, so
/// there is one path whatever runs the session.
pub trait TaintKeeper: Send + Sync {
    /// The taint of `session_id` as its next decision reads it: empty when there is none. A keeper that cannot
    /// read it answers a taint of both kinds (its ways out ask), never an empty one.
    fn load(&self, session_id: &str) -> SessionTaint;

    /// Adds what a call answered `decision` adds to `session_id` ([`SessionTaint::record`]); an error says why it
    /// could not be kept.
    fn record(&self, session_id: &str, facts: &TaintFacts, decision: Decision) -> Result<(), String>;

    /// Forgets the taint of `session_id` once a person has looked at it, and answers what it was (empty when
    /// there was none), so that the forgetting can be recorded with what was forgotten.
    fn clear(&self, session_id: &str) -> Result<SessionTaint, String>;

    /// Where the taint is kept, in words (`memory of the server`, the directory of the files).
    fn place(&self) -> String;
}

/// A [`TaintKeeper`] in memory: the runtime's sessions (`agent-guard run`), and the sessions a server runs. The
/// taint lives as long as the keeper, or until [`TaintInMemory::forget`].
#[derive(Debug, Default)]
pub struct TaintInMemory {
    sessions: std::sync::Mutex<std::collections::HashMap<String, SessionTaint>>,
    place: String,
}

impl TaintInMemory {
    /// An empty keeper whose [`TaintKeeper::place`] is `place`.
    pub fn new(place: impl Into<String>) -> Self {
        Self {
            sessions: std::sync::Mutex::default(),
            place: place.into(),
        }
    }

    /// Drops the taint of a session that ended: nothing decides in it any more.
    pub fn forget(&self, session_id: &str) {
        self.sessions().remove(session_id);
    }

    /// Whether `session_id` has a taint here (it has been recorded and not forgotten).
    pub fn holds(&self, session_id: &str) -> bool {
        self.sessions().contains_key(session_id)
    }

    fn sessions(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<String, SessionTaint>> {
        self.sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl TaintKeeper for TaintInMemory {
    fn load(&self, session_id: &str) -> SessionTaint {
        self.sessions().get(session_id).cloned().unwrap_or_default()
    }

    fn record(&self, session_id: &str, facts: &TaintFacts, decision: Decision) -> Result<(), String> {
        if facts.is_empty() || decision == Decision::Deny {
            return Ok(());
        }
        self.sessions()
            .entry(session_id.to_owned())
            .or_default()
            .record(facts, decision);
        Ok(())
    }

    fn clear(&self, session_id: &str) -> Result<SessionTaint, String> {
        Ok(self.sessions().remove(session_id).unwrap_or_default())
    }

    fn place(&self) -> String {
        if self.place.is_empty() {
            "memory".to_owned()
        } else {
            self.place.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mark(call: &str) -> Option<TaintMark> {
        Some(TaintMark::new(call, "because"))
    }

    #[test]
    fn a_denied_call_adds_nothing_and_an_asked_one_adds_no_domain() {
        let facts = TaintFacts {
            untrusted: mark("WebFetch https://a.example"),
            private: None,
            contacted: vec!["a.example".to_owned()],
        };
        let mut taint = SessionTaint::default();
        taint.record(&facts, Decision::Deny);
        assert!(taint.is_clean());
        taint.record(&facts, Decision::Ask);
        assert!(taint.untrusted.is_some() && taint.contacted.is_empty());
        taint.record(&facts, Decision::Allow);
        assert_eq!(taint.contacted, ["a.example"]);
    }

    #[test]
    fn the_first_mark_of_each_kind_stays_and_domains_are_bounded() {
        let mut taint = SessionTaint::default();
        for i in 0..MAX_CONTACTED + 10 {
            let facts = TaintFacts {
                untrusted: mark(&format!("call {i}")),
                private: mark(&format!("read {i}")),
                contacted: vec![format!("d{i}.example")],
            };
            taint.record(&facts, Decision::Allow);
        }
        assert!(taint.is_trifecta());
        assert_eq!(taint.untrusted.as_ref().map(|m| m.call.as_str()), Some("call 0"));
        assert_eq!(taint.contacted.len(), MAX_CONTACTED);
        assert!(!taint.has_contacted("d0.example"));
        assert!(taint.has_contacted(&format!("d{}.example", MAX_CONTACTED + 9)));
    }

    #[test]
    fn a_keeper_in_memory_records_and_answers_what_it_cleared() {
        let keeper = TaintInMemory::new("memory of the test");
        let facts = TaintFacts {
            untrusted: mark("WebFetch https://a.example"),
            private: mark("Read ~/.ssh/config"),
            contacted: vec!["a.example".to_owned()],
        };
        keeper.record("s1", &facts, Decision::Deny).unwrap();
        assert!(!keeper.holds("s1"));
        keeper.record("s1", &facts, Decision::Allow).unwrap();
        assert!(keeper.load("s1").is_trifecta());
        assert!(keeper.load("s2").is_clean());
        let cleared = keeper.clear("s1").unwrap();
        assert!(cleared.is_trifecta());
        assert_eq!(cleared.contacted, ["a.example"]);
        assert!(keeper.load("s1").is_clean());
        assert_eq!(keeper.clear("s1").unwrap(), SessionTaint::default());
        assert_eq!(keeper.place(), "memory of the test");
        assert_eq!(
            cleared.summary(),
            "untrusted content: `WebFetch https://a.example` (because); private data: `Read ~/.ssh/config` \
             (because); 1 domain reached"
        );
    }

    /// Joining the words only up to the cut gives what joining them all and cutting gives.
    #[test]
    fn a_call_is_joined_up_to_its_cut() {
        let whole = |call: &str| {
            let joined = call.split_whitespace().collect::<Vec<_>>().join(" ");
            match joined.char_indices().nth(MAX_CALL_CHARS) {
                Some((cut, _)) => format!("{}…", joined.get(..cut).unwrap_or_default()),
                None => joined,
            }
        };
        let word = "é".repeat(MAX_CALL_CHARS - 3);
        let mut calls = vec![
            String::new(),
            " \n\t ".to_owned(),
            "ls".to_owned(),
            "  git   status\n".to_owned(),
            format!("{word} ab"),
            format!("{word}  abc"),
            format!("{word} abcd"),
            format!("{word}ab cd"),
            format!("x {}", "y".repeat(MAX_CALL_CHARS)),
            "a ".repeat(MAX_CALL_CHARS),
        ];
        calls.extend((MAX_CALL_CHARS - 2..MAX_CALL_CHARS + 3).map(|n| "z".repeat(n)));
        for call in &calls {
            assert_eq!(one_line(call), whole(call), "{call:?}");
        }
    }

    #[test]
    fn a_long_call_is_shortened_to_one_line() {
        let long = format!("curl \n {}", "x".repeat(400));
        let mark = TaintMark::new(&long, "why");
        assert!(!mark.call.contains('\n'));
        assert!(mark.call.ends_with('…'));
        assert_eq!(mark.call.chars().count(), MAX_CALL_CHARS + 1);
    }
}
