-- The audit log: one row per tool call that got a decision, and one SESSION_STOP row per stopped session.
CREATE TABLE IF NOT EXISTS agent_audit_log (
    id             INTEGER PRIMARY KEY,
    session_id     TEXT    NOT NULL,
    step           INTEGER NOT NULL,
    tool_name      TEXT    NOT NULL,
    status         TEXT    NOT NULL CHECK (status IN ('OK', 'FAIL', 'DENIED', 'SESSION_STOP')),
    decision       TEXT,
    decided_by     TEXT,
    elapsed_ms     INTEGER NOT NULL,
    output_preview TEXT    NOT NULL,
    agent_name     TEXT    NOT NULL,
    ts             TEXT    NOT NULL
);

CREATE INDEX IF NOT EXISTS agent_audit_log_session_ts ON agent_audit_log (session_id, ts);
