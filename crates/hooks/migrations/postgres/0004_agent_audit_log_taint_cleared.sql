-- A status for the row a person's clearing of a session's taint writes: TAINT_CLEARED.
ALTER TABLE agent_audit_log DROP CONSTRAINT IF EXISTS agent_audit_log_status_check;
ALTER TABLE agent_audit_log ADD CONSTRAINT agent_audit_log_status_check
    CHECK (status IN ('OK', 'FAIL', 'DENIED', 'SESSION_STOP', 'TAINT_CLEARED'));
