-- What a decision rested on besides its layer and step: the rule that decided and the file it was read from, the
-- kernel sandbox an allowed shell call ran under, and who answered an ask. NULL where none applies and in the rows
-- written before these columns existed.
ALTER TABLE agent_audit_log ADD COLUMN rule TEXT;
ALTER TABLE agent_audit_log ADD COLUMN rule_file TEXT;
ALTER TABLE agent_audit_log ADD COLUMN sandbox TEXT;
ALTER TABLE agent_audit_log ADD COLUMN approver TEXT;
