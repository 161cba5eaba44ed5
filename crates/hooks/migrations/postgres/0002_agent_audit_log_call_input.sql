-- The call's input, working directory and mode, so that a logged call can be decided again under other settings.
-- NULL in the rows written before these columns existed, in SESSION_STOP rows and for inputs too large to keep.
ALTER TABLE agent_audit_log ADD COLUMN IF NOT EXISTS tool_input TEXT;
ALTER TABLE agent_audit_log ADD COLUMN IF NOT EXISTS cwd TEXT;
ALTER TABLE agent_audit_log ADD COLUMN IF NOT EXISTS permission_mode TEXT;
