//! Two `agent-guard serve` processes on one PostgreSQL database (a throwaway server, as for the audit log's
//! PostgreSQL tests): an ask made through one is answered on the other and releases the `check` waiting on the
//! first; the events of each reach the streams of both; the audit rows of both are in the one table.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

#[allow(unreachable_pub)]
#[path = "../../hooks/tests/pg/mod.rs"]
mod pg;
mod served;

use std::io::BufReader;
use std::time::Duration;

use serde_json::json;
use served::{TOKEN, client, decision_of, read_events, serve};

#[test]
fn two_servers_on_one_database_hand_an_answer_across() {
    let Some(postgres) = pg::PgServer::start_or_skip() else {
        return;
    };
    let url = postgres.create_database("serve");
    let first = serve(&["--token", TOKEN, "--db", &url]);
    let second = serve(&["--token", TOKEN, "--db", &url]);
    let follow = |server: &served::Served| {
        let stream = client()
            .get(format!("{}/v1/events?session=s-pg", server.url))
            .bearer_auth(TOKEN)
            .send()
            .unwrap();
        assert_eq!(stream.status().as_u16(), 200);
        BufReader::new(stream)
    };
    let mut on_first = follow(&first);
    let mut on_second = follow(&second);

    // The check asks through the first server; the ask is pending on the second too.
    let mut input = first.input("s-pg", "npm test");
    input["cwd"] = json!(second.project);
    let mut waiting = first.spawn_client(&["check"], &input, &[]);
    let pending = second.wait_pending(1);
    let id = pending[0]["id"].as_str().unwrap().to_owned();
    // Not a wait for a condition: the answer comes late, and the check is still waiting then.
    std::thread::sleep(Duration::from_millis(200));
    assert!(waiting.try_wait().unwrap().is_none(), "the check did not wait");
    let (status, _) = second.post(&format!("/v1/approvals/{id}"), &json!({"answer": "allow_once"}));
    assert_eq!(status, 200);
    assert_eq!(decision_of(&waiting.wait_with_output().unwrap()), "allow");
    // One answer per ask, whichever server gets the second.
    let (status, _) = first.post(&format!("/v1/approvals/{id}"), &json!({"answer": "deny"}));
    assert_eq!(status, 409);

    for reader in [&mut on_first, &mut on_second] {
        let events = read_events(reader, 2);
        let kinds: Vec<&str> = events.iter().map(|e| e.event.as_str()).collect();
        assert_eq!(kinds, ["permission_request", "permission_resolved"]);
        assert!(events.iter().all(|e| e.data["id"] == id.as_str()));
        assert_eq!(events[1].data["state"], "allow_once");
    }

    // A decision on one server is an audit row both read, and an event on both streams.
    first.post("/v1/decide", &first.input("s-pg", "ls"));
    for reader in [&mut on_first, &mut on_second] {
        let events = read_events(reader, 1);
        assert_eq!(events[0].event, "decision");
        assert_eq!(events[0].data["decision"], "allow");
    }
    for _ in 0..100 {
        let (_, rows) = second.get("/v1/audit?session=s-pg");
        let rows = rows.as_array().unwrap();
        if rows.len() == 2 {
            // Both rows may bear the same time, so their order is not asserted: the answered ask and the plain
            // decision, each allowed.
            assert!(rows.iter().all(|row| row["decision"] == "allow"), "{rows:?}");
            let mut by: Vec<&str> = rows
                .iter()
                .map(|row| row["decided_by"].as_str().unwrap())
                .collect();
            by.sort_unstable();
            assert_eq!(by, ["approval/approver", "rules/default"]);
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("the audit rows of both servers never showed");
}
