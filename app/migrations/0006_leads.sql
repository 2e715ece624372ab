-- depends: 0005_monitoring
-- Lead lots (made by the worker), the monthly allowance of each plan, the daily quota of free
-- exports, and webhook events of lots delivered through the monitors' delivery log.

-- Months and days as the account holders count them: Brasília's (allowances renew on the 1st,
-- free exports at midnight).
CREATE OR REPLACE FUNCTION dia_brasilia() RETURNS date LANGUAGE sql STABLE
    AS $$ SELECT (now() AT TIME ZONE 'America/Sao_Paulo')::date $$;
CREATE OR REPLACE FUNCTION mes_brasilia() RETURNS date LANGUAGE sql STABLE
    AS $$ SELECT date_trunc('month', now() AT TIME ZONE 'America/Sao_Paulo')::date $$;

-- Leads a plan may put in lots per calendar month (Brasília time); 0: no paid lots.
ALTER TABLE planos ADD COLUMN IF NOT EXISTS leads_mes integer NOT NULL DEFAULT 0;
UPDATE planos SET leads_mes = CASE nome
    WHEN 'starter' THEN 0 WHEN 'basic' THEN 5000 WHEN 'pro' THEN 50000
    WHEN 'business' THEN 250000 WHEN 'enterprise' THEN 1000000 ELSE leads_mes END;

-- `reservado`: leads the lot takes from the month's allowance (the quantity asked while it is
-- made, the rows written once done, 0 when it failed). `segredo_sal` as for monitors.
CREATE TABLE IF NOT EXISTS lotes (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    conta_id bigint NOT NULL REFERENCES contas (id) ON DELETE CASCADE,
    filtros jsonb NOT NULL,
    quantidade integer NOT NULL CHECK (quantidade > 0),
    formato text NOT NULL CHECK (formato IN ('csv', 'xlsx', 'pdf')),
    estado text NOT NULL DEFAULT 'pendente'
        CHECK (estado IN ('pendente', 'processando', 'concluido', 'falhou', 'expirado')),
    reservado integer NOT NULL,
    mes date NOT NULL,
    webhook_url text,
    segredo_sal text NOT NULL,
    linhas integer,
    tamanho bigint,
    arquivo text,
    erro text,
    tentativas integer NOT NULL DEFAULT 0,
    criado_em timestamptz NOT NULL DEFAULT now(),
    iniciado_em timestamptz,
    concluido_em timestamptz,
    expira_em timestamptz
);
CREATE INDEX IF NOT EXISTS lotes_conta ON lotes (conta_id, id);
CREATE INDEX IF NOT EXISTS lotes_mes ON lotes (conta_id, mes);
CREATE INDEX IF NOT EXISTS lotes_expirando ON lotes (expira_em) WHERE estado = 'concluido';

-- Free exports used per day: one row per account and one per client fingerprint.
CREATE TABLE IF NOT EXISTS exportacoes_gratis (
    chave text NOT NULL,
    dia date NOT NULL,
    usadas integer NOT NULL DEFAULT 0,
    PRIMARY KEY (chave, dia)
);

-- An event is a monitor's or a lot's.
ALTER TABLE entregas ALTER COLUMN monitor_id DROP NOT NULL;
ALTER TABLE entregas ADD COLUMN IF NOT EXISTS lote_id bigint REFERENCES lotes (id) ON DELETE CASCADE;
DO $$ BEGIN
    ALTER TABLE entregas ADD CONSTRAINT entregas_um_dono
        CHECK ((monitor_id IS NULL) <> (lote_id IS NULL));
EXCEPTION WHEN duplicate_object THEN NULL;
END $$;
CREATE INDEX IF NOT EXISTS entregas_lote ON entregas (lote_id) WHERE lote_id IS NOT NULL;
