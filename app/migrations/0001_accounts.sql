-- Accounts, plans, API keys, e-mail codes, usage counters and the audit log.
-- Applied by yoyo (`registry-admin migrate`); every statement is also safe to re-run.

CREATE TABLE IF NOT EXISTS planos (
    nome text PRIMARY KEY,
    limite_por_minuto integer NOT NULL CHECK (limite_por_minuto > 0)
);

INSERT INTO planos (nome, limite_por_minuto)
VALUES ('starter', 3), ('basic', 20), ('pro', 100), ('business', 250), ('enterprise', 500)
ON CONFLICT (nome) DO NOTHING;

CREATE TABLE IF NOT EXISTS contas (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    nome text NOT NULL,
    email text NOT NULL UNIQUE,
    telefone text NOT NULL DEFAULT '',
    plano text NOT NULL DEFAULT 'starter' REFERENCES planos (nome),
    papel text NOT NULL DEFAULT 'usuario' CHECK (papel IN ('usuario', 'admin')),
    criada_em timestamptz NOT NULL DEFAULT now()
);

-- `id` is the public part of the key (`cnpj_<id>_<secret>`); `hash` is HMAC-SHA256 of the
-- whole key under the server secret. The key itself is never stored.
CREATE TABLE IF NOT EXISTS chaves (
    id text PRIMARY KEY,
    conta_id bigint NOT NULL REFERENCES contas (id) ON DELETE CASCADE,
    rotulo text NOT NULL,
    hash bytea NOT NULL,
    allowlist cidr[] NOT NULL DEFAULT '{}',
    criada_em timestamptz NOT NULL DEFAULT now(),
    ultimo_uso timestamptz,
    revogada_em timestamptz
);
CREATE INDEX IF NOT EXISTS chaves_conta_id ON chaves (conta_id);

-- One pending code per e-mail; `hash` is HMAC-SHA256 of e-mail and code.
CREATE TABLE IF NOT EXISTS codigos_email (
    email text PRIMARY KEY,
    nome text NOT NULL,
    telefone text NOT NULL,
    hash bytea NOT NULL,
    expira_em timestamptz NOT NULL,
    tentativas integer NOT NULL DEFAULT 0,
    usado_em timestamptz
);

CREATE TABLE IF NOT EXISTS uso_chaves (
    chave_id text NOT NULL REFERENCES chaves (id) ON DELETE CASCADE,
    dia date NOT NULL,
    consultas bigint NOT NULL DEFAULT 0,
    buscas bigint NOT NULL DEFAULT 0,
    analises bigint NOT NULL DEFAULT 0,
    exportacoes bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (chave_id, dia)
);

-- No foreign key: audit rows outlive the keys they name.
CREATE TABLE IF NOT EXISTS auditoria (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    chave_id text NOT NULL,
    metodo text NOT NULL,
    rota text NOT NULL,
    caminho text NOT NULL,
    ip inet,
    user_agent text NOT NULL DEFAULT '',
    status smallint NOT NULL,
    em timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS auditoria_chave_id ON auditoria (chave_id, id);
CREATE INDEX IF NOT EXISTS auditoria_em ON auditoria (em);
