-- depends: 0004_job_queue
-- Monitors of CNPJs, the releases they are checked against, the events they raise and every
-- delivery attempt of those events to the subscriber's webhook.

ALTER TABLE planos ADD COLUMN IF NOT EXISTS monitores_max integer NOT NULL DEFAULT 10;
UPDATE planos SET monitores_max = CASE nome
    WHEN 'starter' THEN 10 WHEN 'basic' THEN 100 WHEN 'pro' THEN 1000
    WHEN 'business' THEN 5000 WHEN 'enterprise' THEN 20000 ELSE monitores_max END;

-- A release that went live: recorded by the indexer's alias swap (and, as a safety net, by
-- the worker when it sees the alias point at an index it does not know).
CREATE TABLE IF NOT EXISTS releases (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    alias text NOT NULL,
    indice text NOT NULL UNIQUE,
    publicada_em timestamptz NOT NULL DEFAULT now(),
    verificada_em timestamptz
);

-- `segredo_sal`: the signing secret is HMAC-SHA256 of the monitor and this salt under the
-- server secret, so the database alone never holds a secret; rotating draws a new salt.
-- `referencia`: the record as last seen (the baseline events are computed against).
CREATE TABLE IF NOT EXISTS monitores (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    conta_id bigint NOT NULL REFERENCES contas (id) ON DELETE CASCADE,
    cnpj text NOT NULL,
    webhook_url text NOT NULL,
    eventos text[] NOT NULL,
    descricao text NOT NULL DEFAULT '',
    estado text NOT NULL DEFAULT 'ativo' CHECK (estado IN ('ativo', 'pausado')),
    motivo_pausa text,
    segredo_sal text NOT NULL,
    referencia jsonb,
    referencia_hash text,
    referencia_indice text,
    criado_em timestamptz NOT NULL DEFAULT now(),
    ultima_verificacao timestamptz,
    ultima_alteracao timestamptz,
    UNIQUE (conta_id, cnpj, webhook_url)
);
CREATE INDEX IF NOT EXISTS monitores_conta ON monitores (conta_id, id);
CREATE INDEX IF NOT EXISTS monitores_ativos ON monitores (id) WHERE estado = 'ativo';

-- One event to deliver (its `id` is the stable `webhook-id` of every attempt).
-- `tentativas`: attempts made; `rodada_inicio`: attempts made before the current round of
-- retries (a re-send starts a new round: its schedule starts over, the numbering goes on).
CREATE TABLE IF NOT EXISTS entregas (
    id uuid PRIMARY KEY,
    monitor_id bigint NOT NULL REFERENCES monitores (id) ON DELETE CASCADE,
    tipo text NOT NULL,
    corpo jsonb NOT NULL,
    estado text NOT NULL DEFAULT 'pendente'
        CHECK (estado IN ('pendente', 'entregue', 'falhou', 'cancelada')),
    tentativas integer NOT NULL DEFAULT 0,
    rodada_inicio integer NOT NULL DEFAULT 0,
    criada_em timestamptz NOT NULL DEFAULT now(),
    concluida_em timestamptz
);
CREATE INDEX IF NOT EXISTS entregas_monitor ON entregas (monitor_id, criada_em);

CREATE TABLE IF NOT EXISTS tentativas (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    entrega_id uuid NOT NULL REFERENCES entregas (id) ON DELETE CASCADE,
    tentativa integer NOT NULL,
    em timestamptz NOT NULL DEFAULT now(),
    status_http integer,
    duracao_ms integer NOT NULL,
    erro text,
    proxima_em timestamptz
);
CREATE INDEX IF NOT EXISTS tentativas_entrega ON tentativas (entrega_id, id);
