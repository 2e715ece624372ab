-- depends: 0001_accounts
-- Units of each audited call (a batch counts one per item) and the daily counters of the
-- token bootstrap per e-mail address, which asking for a new code does not reset.

ALTER TABLE auditoria ADD COLUMN IF NOT EXISTS unidades smallint NOT NULL DEFAULT 1;

CREATE TABLE IF NOT EXISTS bootstrap_diario (
    email text NOT NULL,
    dia date NOT NULL,
    codigos integer NOT NULL DEFAULT 0,
    falhas integer NOT NULL DEFAULT 0,
    PRIMARY KEY (email, dia)
);
