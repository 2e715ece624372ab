-- depends: 0008_monitor_alias
-- Wrong sign-in codes counted per address they came from: a stranger's wrong tries spend the
-- stranger's own tries on the code and on the day, not the owner's, so no one can lock an
-- e-mail out of signing in by guessing at it. `no_codigo` counts the tries on the e-mail's
-- current code (reset when a new code is sent), `falhas` those of the day (UTC).

CREATE TABLE IF NOT EXISTS falhas_codigo (
    email text NOT NULL,
    origem text NOT NULL,
    dia date NOT NULL,
    falhas integer NOT NULL DEFAULT 0,
    no_codigo integer NOT NULL DEFAULT 0,
    PRIMARY KEY (email, origem, dia)
);
