-- A status for the row a person's clearing of a session's taint writes: TAINT_CLEARED. SQLite cannot change a
-- CHECK constraint in place, so the table is made again with the wider one and the rows copied, ids kept.
CREATE TABLE agent_audit_log_next (
    id             INTEGER PRIMARY KEY,
    session_id     TEXT    NOT NULL,
    step           INTEGER NOT NULL,
    tool_name      TEXT    NOT NULL,
    status         TEXT    NOT NULL CHECK (status IN ('OK', 'FAIL', 'DENIED', 'SESSION_STOP', 'TAINT_CLEARED')),
    decision       TEXT,
    decided_by     TEXT,
    elapsed_ms     INTEGER NOT NULL,
    output_preview TEXT    NOT NULL,
    agent_name     TEXT    NOT NULL,
    ts             TEXT    NOT NULL,
    tool_input     TEXT,
    cwd            TEXT,
    permission_mode TEXT,
    rule           TEXT,
    rule_file      TEXT,
    sandbox        TEXT,
    approver       TEXT
);

INSERT INTO agent_audit_log_next (id, session_id, step, tool_name, status, decision, decided_by, elapsed_ms,
    output_preview, agent_name, ts, tool_input, cwd, permission_mode, rule, rule_file, sandbox, approver)
SELECT id, session_id, step, tool_name, status, decision, decided_by, elapsed_ms, output_preview, agent_name, ts,
    tool_input, cwd, permission_mode, rule, rule_file, sandbox, approver
FROM agent_audit_log;

DROP TABLE agent_audit_log;
ALTER TABLE agent_audit_log_next RENAME TO agent_audit_log;
CREATE INDEX IF NOT EXISTS agent_audit_log_session_ts ON agent_audit_log (session_id, ts);
