-- depends: 0009_code_failures
-- A lot asked for with an idempotency key keeps the key and a digest of its request: the same
-- key from the same account within a day answers that lot again instead of making (and
-- charging) a second one. One key names at most one lot of an account at a time.

ALTER TABLE lotes ADD COLUMN IF NOT EXISTS chave_idempotencia text;
ALTER TABLE lotes ADD COLUMN IF NOT EXISTS pedido_hash text;
CREATE UNIQUE INDEX IF NOT EXISTS lotes_idempotencia ON lotes (conta_id, chave_idempotencia)
    WHERE chave_idempotencia IS NOT NULL;
