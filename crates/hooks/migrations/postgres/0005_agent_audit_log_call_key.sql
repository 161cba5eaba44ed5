-- The key of the tool call an allowed `workspace-write` shell line ran for (the coding agent's tool call id, or one
-- agent-guard made): the runs `agent-guard undo` recorded for the call carry the same key. NULL for every other row
-- and in the rows written before the column existed.
ALTER TABLE agent_audit_log ADD COLUMN call_key TEXT;
