-- depends: 0002_access_hardening
-- The service operation each audited call ran (the tool, for the agent interface), beside the
-- face it came through (`rota`: the REST route's template, or /mcp).

ALTER TABLE auditoria ADD COLUMN IF NOT EXISTS operacao text;
CREATE INDEX IF NOT EXISTS auditoria_operacao ON auditoria (operacao, id);
