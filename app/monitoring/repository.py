"""All SQL of monitors, releases, events (`entregas`) and delivery attempts: plain,
parameterised psycopg 3. Callers own the transactions."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

import msgspec
from psycopg import AsyncConnection
from psycopg.rows import class_row
from psycopg.types.json import Jsonb


class Monitor(msgspec.Struct, kw_only=True):
    """A monitor as its owner sees it (never its secret)."""

    id: int
    cnpj: str
    webhook_url: str
    eventos: list[str]
    descricao: str
    estado: str
    """`ativo` or `pausado`."""
    motivo_pausa: str | None
    """Why it was paused, when the service paused it (the endpoint answered 410, or failed
    every retry)."""
    criado_em: datetime
    ultima_verificacao: datetime | None
    ultima_alteracao: datetime | None


class Vigia(Monitor, kw_only=True):
    """A monitor as the service works with it: its owner, salt and baseline."""

    conta_id: int
    segredo_sal: str
    referencia: dict[str, Any] | None
    referencia_hash: str | None
    referencia_indice: str | None


IN_FLIGHT_MARGIN = 5.0
"""Seconds past the send's timeout after which a test event still `pendente` no longer counts as
in flight (its process died before recording the answer)."""

_PUBLIC = (
    "id, cnpj, webhook_url, eventos, descricao, estado, motivo_pausa, criado_em, "
    "ultima_verificacao, ultima_alteracao"
)
_ALL = _PUBLIC + ", conta_id, segredo_sal, referencia, referencia_hash, referencia_indice"


async def plan_allowance(conn: AsyncConnection, conta_id: int) -> tuple[int, int]:
    """(monitors the account has, monitors its plan allows), the account's row locked until
    the transaction ends, so two creations never both take the last one."""
    cursor = await conn.execute(
        """
        SELECT p.monitores_max FROM contas c JOIN planos p ON p.nome = c.plano
        WHERE c.id = %s FOR UPDATE OF c
        """,
        (conta_id,),
    )
    row = await cursor.fetchone()
    if row is None:
        return 0, 0
    # A statement of its own, after the lock: its snapshot sees the monitors committed by
    # whoever held the lock before (a subquery of the locking statement would not).
    cursor = await conn.execute("SELECT count(*) FROM monitores WHERE conta_id = %s", (conta_id,))
    have = await cursor.fetchone()
    return int(have[0]) if have else 0, int(row[0])


async def insert_monitor(
    conn: AsyncConnection,
    *,
    conta_id: int,
    cnpj: str,
    webhook_url: str,
    eventos: list[str],
    descricao: str,
    sal: str,
    referencia: dict[str, Any],
    referencia_hash: str,
    indice: str | None,
    alias: str,
) -> Vigia | None:
    """The new monitor, or None when the account already watches that CNPJ at that URL."""
    cursor = conn.cursor(row_factory=class_row(Vigia))
    await cursor.execute(
        f"""
        INSERT INTO monitores (conta_id, cnpj, webhook_url, eventos, descricao, segredo_sal,
                               referencia, referencia_hash, referencia_indice,
                               ultima_verificacao, alias)
        VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, now(), %s)
        ON CONFLICT (conta_id, cnpj, webhook_url) DO NOTHING
        RETURNING {_ALL}
        """,  # noqa: S608 - a constant column list
        (
            conta_id,
            cnpj,
            webhook_url,
            eventos,
            descricao,
            sal,
            Jsonb(referencia),
            referencia_hash,
            indice,
            alias,
        ),
    )
    return await cursor.fetchone()


async def find_monitor(
    conn: AsyncConnection, monitor_id: int, conta_id: int | None = None, *, lock: bool = False
) -> Vigia | None:
    """A monitor by id (of the account, when given)."""
    cursor = conn.cursor(row_factory=class_row(Vigia))
    await cursor.execute(
        f"SELECT {_ALL} FROM monitores WHERE id = %s AND (%s::bigint IS NULL OR conta_id = %s)"  # noqa: S608
        + (" FOR UPDATE" if lock else ""),
        (monitor_id, conta_id, conta_id),
    )
    return await cursor.fetchone()


async def list_monitors(
    conn: AsyncConnection, conta_id: int, estado: str | None, after: int | None, limit: int
) -> list[Monitor]:
    cursor = conn.cursor(row_factory=class_row(Monitor))
    await cursor.execute(
        f"""
        SELECT {_PUBLIC} FROM monitores
        WHERE conta_id = %s AND (%s::text IS NULL OR estado = %s)
          AND (%s::bigint IS NULL OR id > %s)
        ORDER BY id LIMIT %s
        """,  # noqa: S608
        (conta_id, estado, estado, after, after, limit),
    )
    return await cursor.fetchall()


async def count_monitors(conn: AsyncConnection, conta_id: int, estado: str | None) -> int:
    cursor = await conn.execute(
        "SELECT count(*) FROM monitores WHERE conta_id = %s AND (%s::text IS NULL OR estado = %s)",
        (conta_id, estado, estado),
    )
    row = await cursor.fetchone()
    return int(row[0]) if row else 0


async def update_monitor(
    conn: AsyncConnection, monitor_id: int, changes: dict[str, Any]
) -> Monitor | None:
    """Sets the given columns (names from the service's own list, values as parameters)."""
    allowed = {"webhook_url", "eventos", "descricao", "estado", "motivo_pausa", "segredo_sal"}
    names = [name for name in changes if name in allowed]
    assignments = ", ".join(f"{name} = %s" for name in names)
    cursor = conn.cursor(row_factory=class_row(Monitor))
    await cursor.execute(
        f"UPDATE monitores SET {assignments} WHERE id = %s RETURNING {_PUBLIC}",  # noqa: S608
        (*(changes[name] for name in names), monitor_id),
    )
    return await cursor.fetchone()


async def delete_monitor(conn: AsyncConnection, conta_id: int, monitor_id: int) -> bool:
    cursor = await conn.execute(
        "DELETE FROM monitores WHERE id = %s AND conta_id = %s", (monitor_id, conta_id)
    )
    return cursor.rowcount > 0


async def active_batch(conn: AsyncConnection, alias: str, after: int, limit: int) -> list[Vigia]:
    """The next active monitors of `alias` (and those made before monitors had an alias)."""
    cursor = conn.cursor(row_factory=class_row(Vigia))
    await cursor.execute(
        f"SELECT {_ALL} FROM monitores WHERE estado = 'ativo' AND id > %s "  # noqa: S608
        "AND (alias = %s OR alias IS NULL) ORDER BY id LIMIT %s",
        (after, alias, limit),
    )
    return await cursor.fetchall()


class Baseline(msgspec.Struct, frozen=True):
    """A monitor's new baseline, to store if its old one (`antes_hash`) is still there."""

    monitor_id: int
    referencia: dict[str, Any] | None
    referencia_hash: str | None
    antes_hash: str | None
    alterado: bool
    """Whether the move is news (False: only derived fields moved, followed silently)."""


async def save_references(
    conn: AsyncConnection, baselines: list[Baseline], indice: str | None
) -> set[int]:
    """Moves the monitors' baselines, each only if nobody moved it since it was read (so two
    checks of the same release never raise the same event twice); the ids it moved."""
    if not baselines:
        return set()
    cursor = await conn.execute(
        """
        UPDATE monitores m
        SET referencia = v.referencia, referencia_hash = v.hash, referencia_indice = %s,
            ultima_verificacao = now(),
            ultima_alteracao = CASE WHEN v.alterado THEN now() ELSE m.ultima_alteracao END
        FROM unnest(%s::bigint[], %s::jsonb[], %s::text[], %s::text[], %s::boolean[])
             AS v (id, referencia, hash, antes, alterado)
        WHERE m.id = v.id AND m.referencia_hash IS NOT DISTINCT FROM v.antes
        RETURNING m.id
        """,
        (
            indice,
            [item.monitor_id for item in baselines],
            [None if item.referencia is None else Jsonb(item.referencia) for item in baselines],
            [item.referencia_hash for item in baselines],
            [item.antes_hash for item in baselines],
            [item.alterado for item in baselines],
        ),
    )
    return {int(row[0]) for row in await cursor.fetchall()}


async def mark_checked(conn: AsyncConnection, ids: list[int], indice: str | None) -> None:
    if ids:
        await conn.execute(
            "UPDATE monitores SET ultima_verificacao = now(), referencia_indice = %s "
            "WHERE id = ANY(%s)",
            (indice, ids),
        )


class NovaEntrega(msgspec.Struct, frozen=True):
    """An event of a monitor or, with `lote_id`, of a lead lot (`monitor_id` None)."""

    id: uuid.UUID
    monitor_id: int | None
    tipo: str
    corpo: dict[str, Any]
    lote_id: int | None = None


async def tests_in_flight(conn: AsyncConnection, conta_id: int, tipo: str, timeout: float) -> int:
    """The account's test events not yet answered (younger than the send's `timeout` and a
    margin, so a process that died while sending holds nothing for long)."""
    cursor = await conn.execute(
        """
        SELECT count(*) FROM entregas e JOIN monitores m ON m.id = e.monitor_id
        WHERE m.conta_id = %s AND e.tipo = %s AND e.estado = 'pendente'
          AND e.criada_em > now() - make_interval(secs => %s)
        """,
        (conta_id, tipo, timeout + IN_FLIGHT_MARGIN),
    )
    row = await cursor.fetchone()
    return int(row[0]) if row else 0


async def insert_entregas(conn: AsyncConnection, events: list[NovaEntrega]) -> None:
    if not events:
        return
    async with conn.cursor() as cursor:
        await cursor.executemany(
            "INSERT INTO entregas (id, monitor_id, lote_id, tipo, corpo) "
            "VALUES (%s, %s, %s, %s, %s)",
            [
                (item.id, item.monitor_id, item.lote_id, item.tipo, Jsonb(item.corpo))
                for item in events
            ],
        )


class Pendente(msgspec.Struct, kw_only=True):
    """An event on its way, with what a delivery needs of its monitor or lot."""

    id: uuid.UUID
    monitor_id: int | None
    lote_id: int | None
    tipo: str
    corpo: dict[str, Any]
    estado: str
    tentativas: int
    """Attempts made so far."""
    rodada_inicio: int
    """Attempts made before the current round of retries."""
    conta_id: int
    webhook_url: str
    segredo_sal: str
    monitor_estado: str
    """A lot's events have no monitor to pause: `ativo`."""

    @property
    def dono(self) -> int | str:
        """What the signing secret is derived from (`signing.secret_of`)."""
        return self.monitor_id if self.monitor_id is not None else f"lote-{self.lote_id}"


async def find_entrega(
    conn: AsyncConnection, entrega_id: uuid.UUID, conta_id: int | None = None
) -> Pendente | None:
    cursor = conn.cursor(row_factory=class_row(Pendente))
    await cursor.execute(
        """
        SELECT e.id, e.monitor_id, e.lote_id, e.tipo, e.corpo, e.estado, e.tentativas,
               e.rodada_inicio, coalesce(m.conta_id, l.conta_id) AS conta_id,
               coalesce(m.webhook_url, l.webhook_url) AS webhook_url,
               coalesce(m.segredo_sal, l.segredo_sal) AS segredo_sal,
               coalesce(m.estado, 'ativo') AS monitor_estado
        FROM entregas e
        LEFT JOIN monitores m ON m.id = e.monitor_id
        LEFT JOIN lotes l ON l.id = e.lote_id
        WHERE e.id = %s AND (%s::bigint IS NULL OR coalesce(m.conta_id, l.conta_id) = %s)
        """,
        (entrega_id, conta_id, conta_id),
    )
    return await cursor.fetchone()


async def record_attempt(
    conn: AsyncConnection,
    entrega_id: uuid.UUID,
    tentativa: int,
    resultado: tuple[int | None, int, str | None],
    proxima_em: datetime | None,
    estado: str | None,
) -> None:
    """Logs attempt number `tentativa` (status, milliseconds, error) and counts it; `estado`
    ends the event (`entregue`, `falhou`), None leaves it pending. One statement."""
    status, duracao_ms, erro = resultado
    await conn.execute(
        """
        WITH logged AS (
            INSERT INTO tentativas (entrega_id, tentativa, status_http, duracao_ms, erro,
                                    proxima_em)
            VALUES (%(id)s, %(n)s, %(status)s, %(ms)s, %(erro)s, %(proxima)s)
        )
        UPDATE entregas SET tentativas = %(n)s, estado = coalesce(%(estado)s, estado),
               concluida_em = CASE WHEN %(estado)s::text IS NULL THEN NULL ELSE now() END
        WHERE id = %(id)s
        """,
        {"id": entrega_id, "n": tentativa, "status": status, "ms": duracao_ms, "erro": erro,
         "proxima": proxima_em, "estado": estado},
    )  # fmt: skip


async def reopen_entrega(conn: AsyncConnection, entrega_id: uuid.UUID) -> bool:
    """A new round of retries for a finished event: pending again, its schedule starting
    over; False when it is still pending (nothing changed)."""
    cursor = await conn.execute(
        "UPDATE entregas SET estado = 'pendente', concluida_em = NULL, "
        "rodada_inicio = tentativas WHERE id = %s AND estado <> 'pendente'",
        (entrega_id,),
    )
    return cursor.rowcount > 0


async def pause_monitor(conn: AsyncConnection, monitor_id: int, motivo: str) -> None:
    await conn.execute(
        "UPDATE monitores SET estado = 'pausado', motivo_pausa = %s WHERE id = %s",
        (motivo[:500], monitor_id),
    )


class Tentativa(msgspec.Struct, kw_only=True):
    """One delivery attempt, as the owner's log lists it."""

    id: int
    entrega_id: uuid.UUID
    monitor_id: int | None
    """The monitor whose event it is; None for a lot's (`lote_id`)."""
    lote_id: int | None
    evento: str
    entrega_estado: str
    tentativa: int
    em: datetime
    status_http: int | None
    duracao_ms: int
    erro: str | None
    proxima_em: datetime | None


_ATTEMPTS = """
    FROM tentativas t JOIN entregas e ON e.id = t.entrega_id
    WHERE e.id IN (
        SELECT o.id FROM entregas o JOIN monitores m ON m.id = o.monitor_id
        WHERE m.conta_id = %(conta)s
        UNION ALL
        SELECT o.id FROM entregas o JOIN lotes l ON l.id = o.lote_id WHERE l.conta_id = %(conta)s
      )
      AND (%(monitor)s::bigint IS NULL OR e.monitor_id = %(monitor)s)
      AND (%(evento)s::text IS NULL OR e.tipo = %(evento)s)
      AND (%(ok)s::boolean IS NULL
           OR (%(ok)s AND t.status_http BETWEEN 200 AND 299)
           OR (NOT %(ok)s AND (t.status_http IS NULL OR t.status_http NOT BETWEEN 200 AND 299)))
"""
"""The account's delivery attempts that pass the log's filters: its monitors' events and its
lots' (`lote.concluido`, `lote.falhou`)."""


async def attempts(
    conn: AsyncConnection,
    conta_id: int,
    *,
    monitor_id: int | None,
    evento: str | None,
    ok: bool | None,
    before: int | None,
    limit: int,
) -> tuple[list[Tentativa], int]:
    """A page of the account's delivery attempts, newest first, and how many pass the
    filters in all."""
    params = {"conta": conta_id, "monitor": monitor_id, "evento": evento, "ok": ok}
    cursor = conn.cursor(row_factory=class_row(Tentativa))
    await cursor.execute(
        "SELECT t.id, t.entrega_id, e.monitor_id, e.lote_id, e.tipo AS evento, "
        "e.estado AS entrega_estado, t.tentativa, t.em, t.status_http, t.duracao_ms, t.erro, "
        f"t.proxima_em {_ATTEMPTS} AND (%(before)s::bigint IS NULL OR t.id < %(before)s) "
        "ORDER BY t.id DESC LIMIT %(limit)s",
        {**params, "before": before, "limit": limit},
    )
    rows = await cursor.fetchall()
    counted = await conn.execute(f"SELECT count(*) {_ATTEMPTS}", params)
    row = await counted.fetchone()
    return rows, int(row[0]) if row else 0


_RECORD_RELEASE = """
INSERT INTO releases AS r (alias, indice) VALUES (%(alias)s, %(indice)s)
ON CONFLICT (indice) DO UPDATE SET publicada_em = now(), verificada_em = NULL
WHERE r.id IS DISTINCT FROM (
    SELECT id FROM releases WHERE alias = %(alias)s ORDER BY publicada_em DESC, id DESC LIMIT 1
)
RETURNING id
"""


async def record_release(conn: AsyncConnection, alias: str, indice: str) -> int | None:
    """Records a release that went live: a new one, or an older one live again (a rollback);
    its id, or None when it already is the alias's current release."""
    cursor = await conn.execute(_RECORD_RELEASE, {"alias": alias, "indice": indice})
    row = await cursor.fetchone()
    return int(row[0]) if row else None


async def mark_release_checked(conn: AsyncConnection, indice: str) -> None:
    await conn.execute("UPDATE releases SET verificada_em = now() WHERE indice = %s", (indice,))


async def refresh_queue_statistics(conn: AsyncConnection) -> None:
    """Refreshes the planner's statistics of the job table after a burst of deferred jobs:
    with stale ones (a table it believes small) the queue's fetch of the next job turns from
    an index probe into a scan of every waiting job, ten times slower."""
    await conn.execute("ANALYZE procrastinate_jobs")
