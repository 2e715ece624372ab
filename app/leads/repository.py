"""Lots, allowances and free-export quotas in PostgreSQL."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

import msgspec
from psycopg import AsyncConnection
from psycopg.rows import class_row
from psycopg.types.json import Jsonb

# Months and days are Brasília's (America/Sao_Paulo): allowances renew on the 1st, free
# exports at midnight, as the account holders count them.


class Lote(msgspec.Struct, kw_only=True):
    id: int
    conta_id: int
    filtros: dict[str, Any]
    quantidade: int
    formato: str
    estado: str
    reservado: int
    mes: date
    webhook_url: str | None
    segredo_sal: str
    linhas: int | None
    tamanho: int | None
    arquivo: str | None
    erro: str | None
    tentativas: int
    criado_em: datetime
    iniciado_em: datetime | None
    concluido_em: datetime | None
    expira_em: datetime | None
    chave_idempotencia: str | None = None
    pedido_hash: str | None = None


async def allowance(conn: AsyncConnection, conta_id: int) -> tuple[str, int, int]:
    """The account's plan, its monthly lead allowance and what this month's lots took; locks
    the account's row until the transaction ends, so two lots never both take the last leads."""
    cursor = await conn.execute(
        """
        SELECT c.plano, p.leads_mes FROM contas c JOIN planos p ON p.nome = c.plano
        WHERE c.id = %s FOR UPDATE OF c
        """,
        (conta_id,),
    )
    row = await cursor.fetchone()
    if row is None:
        return "", 0, 0
    # A statement of its own, after the lock: its snapshot sees the lots committed by whoever
    # held the lock before (a subquery of the locking statement would not).
    cursor = await conn.execute(
        "SELECT coalesce(sum(reservado), 0) FROM lotes "
        "WHERE conta_id = %s AND mes = mes_brasilia()",
        (conta_id,),
    )
    used = await cursor.fetchone()
    return str(row[0]), int(row[1]), int(used[0]) if used else 0


async def insert(
    conn: AsyncConnection,
    *,
    conta_id: int,
    filtros: dict[str, Any],
    quantidade: int,
    formato: str,
    webhook_url: str | None,
    sal: str,
    chave_idempotencia: str | None = None,
    pedido_hash: str | None = None,
) -> Lote:
    cursor = conn.cursor(row_factory=class_row(Lote))
    await cursor.execute(
        """
        INSERT INTO lotes (conta_id, filtros, quantidade, formato, reservado, mes, webhook_url,
                           segredo_sal, chave_idempotencia, pedido_hash)
        VALUES (%s, %s, %s, %s, %s, mes_brasilia(), %s, %s, %s, %s)
        RETURNING *
        """,
        (conta_id, Jsonb(filtros), quantidade, formato, quantidade, webhook_url, sal,
         chave_idempotencia, pedido_hash),
    )  # fmt: skip
    row = await cursor.fetchone()
    assert row is not None
    return row


async def by_idempotency_key(
    conn: AsyncConnection, conta_id: int, key: str, window: timedelta
) -> Lote | None:
    """The account's lot made with `key` within `window`, if any."""
    cursor = conn.cursor(row_factory=class_row(Lote))
    await cursor.execute(
        "SELECT * FROM lotes WHERE conta_id = %s AND chave_idempotencia = %s "
        "AND criado_em > now() - %s",
        (conta_id, key, window),
    )
    return await cursor.fetchone()


async def release_key(conn: AsyncConnection, conta_id: int, key: str) -> None:
    """Lets an older lot's idempotency key go, so that it names the lot about to be made (under
    the account's lock, after `by_idempotency_key` found no lot within the window)."""
    await conn.execute(
        "UPDATE lotes SET chave_idempotencia = NULL "
        "WHERE conta_id = %s AND chave_idempotencia = %s",
        (conta_id, key),
    )


async def find(conn: AsyncConnection, lote_id: int, conta_id: int | None = None) -> Lote | None:
    cursor = conn.cursor(row_factory=class_row(Lote))
    await cursor.execute(
        "SELECT * FROM lotes WHERE id = %s AND (%s::bigint IS NULL OR conta_id = %s)",
        (lote_id, conta_id, conta_id),
    )
    return await cursor.fetchone()


async def listing(
    conn: AsyncConnection, conta_id: int, before: int | None, limit: int
) -> list[Lote]:
    cursor = conn.cursor(row_factory=class_row(Lote))
    await cursor.execute(
        """
        SELECT * FROM lotes
        WHERE conta_id = %s AND (%s::bigint IS NULL OR id < %s)
        ORDER BY id DESC LIMIT %s
        """,
        (conta_id, before, before, limit),
    )
    return await cursor.fetchall()


async def count(conn: AsyncConnection, conta_id: int) -> int:
    cursor = await conn.execute("SELECT count(*) FROM lotes WHERE conta_id = %s", (conta_id,))
    row = await cursor.fetchone()
    return int(row[0]) if row else 0


async def start(conn: AsyncConnection, lote_id: int) -> Lote | None:
    """Marks a pending (or interrupted) lot as being made; None when it is finished."""
    cursor = conn.cursor(row_factory=class_row(Lote))
    await cursor.execute(
        """
        UPDATE lotes SET estado = 'processando', iniciado_em = coalesce(iniciado_em, now()),
               tentativas = tentativas + 1
        WHERE id = %s AND estado IN ('pendente', 'processando')
        RETURNING *
        """,
        (lote_id,),
    )
    return await cursor.fetchone()


async def current_run(conn: AsyncConnection, lote_id: int, run: int) -> bool:
    """Whether `run` (the lot's `tentativas` when it started) is still the lot's latest run
    and the lot is still being made; locks the lot's row until the transaction ends, so a
    later run cannot start or finish meanwhile."""
    cursor = await conn.execute(
        "SELECT tentativas = %s AND estado = 'processando' FROM lotes WHERE id = %s FOR UPDATE",
        (run, lote_id),
    )
    row = await cursor.fetchone()
    return bool(row and row[0])


async def finish(
    conn: AsyncConnection,
    lote_id: int,
    run: int,
    linhas: int,
    tamanho: int,
    arquivo: str,
    hours: int,
) -> bool:
    """The lot is done by run `run`: its file, its rows (what it takes from the allowance from
    now on). False when a later run took the lot over, or it is no longer being made."""
    cursor = await conn.execute(
        """
        UPDATE lotes SET estado = 'concluido', linhas = %s, tamanho = %s, arquivo = %s,
               reservado = %s, concluido_em = now(), expira_em = now() + make_interval(hours => %s),
               erro = NULL
        WHERE id = %s AND estado = 'processando' AND tentativas = %s
        """,
        (linhas, tamanho, arquivo, linhas, hours, lote_id, run),
    )
    return cursor.rowcount == 1


async def fail(conn: AsyncConnection, lote_id: int, run: int, erro: str) -> bool:
    """The lot failed in run `run`: it takes nothing from the allowance. False when a later run
    took the lot over, or it is finished."""
    cursor = await conn.execute(
        """
        UPDATE lotes SET estado = 'falhou', erro = %s, reservado = 0, concluido_em = now()
        WHERE id = %s AND estado IN ('pendente', 'processando') AND tentativas = %s
        """,
        (erro[:500], lote_id, run),
    )
    return cursor.rowcount == 1


async def give_up(conn: AsyncConnection, hours: int, erro: str) -> list[Lote]:
    """Lots still not made `hours` after they were asked for become `falhou` with `erro`, and
    take nothing from the allowance any more; those lots."""
    cursor = conn.cursor(row_factory=class_row(Lote))
    await cursor.execute(
        """
        UPDATE lotes SET estado = 'falhou', erro = %s, reservado = 0, concluido_em = now()
        WHERE estado IN ('pendente', 'processando')
          AND criado_em <= now() - make_interval(hours => %s)
        RETURNING *
        """,
        (erro, hours),
    )
    return await cursor.fetchall()


async def expire(conn: AsyncConnection) -> list[tuple[int, str | None]]:
    """Lots whose file's time is up become `expirado`; their ids and files."""
    cursor = await conn.execute(
        """
        UPDATE lotes SET estado = 'expirado'
        WHERE estado = 'concluido' AND expira_em <= now()
        RETURNING id, arquivo
        """
    )
    return [(int(row[0]), row[1]) for row in await cursor.fetchall()]


async def webhook_states(conn: AsyncConnection, lote_ids: list[int]) -> dict[int, str]:
    """The state of the latest status event of each lot that has one."""
    cursor = await conn.execute(
        "SELECT DISTINCT ON (lote_id) lote_id, estado FROM entregas WHERE lote_id = ANY(%s) "
        "ORDER BY lote_id, criada_em DESC",
        (lote_ids,),
    )
    return {int(lote_id): str(estado) for lote_id, estado in await cursor.fetchall()}


async def take_free_export(conn: AsyncConnection, keys: list[str], cap: int) -> int | None:
    """Counts one free export today for each key (account, fingerprint), all or none: the
    fewest left after it, or None when a key already used its `cap` (nothing counted). Call
    inside a transaction."""
    left = cap
    for key in keys:
        cursor = await conn.execute(
            """
            INSERT INTO exportacoes_gratis (chave, dia, usadas) VALUES (%s, dia_brasilia(), 1)
            ON CONFLICT (chave, dia) DO UPDATE SET usadas = exportacoes_gratis.usadas + 1
            WHERE exportacoes_gratis.usadas < %s
            RETURNING usadas
            """,
            (key, cap),
        )
        row = await cursor.fetchone()
        if row is None:
            return None
        left = min(left, cap - int(row[0]))
    return left


async def seconds_to_midnight(conn: AsyncConnection) -> int:
    """Seconds until the next day starts in Brasília (when the free exports come back)."""
    cursor = await conn.execute(
        "SELECT extract(epoch FROM (dia_brasilia() + 1)::timestamp "
        "- (now() AT TIME ZONE 'America/Sao_Paulo'))::int"
    )
    row = await cursor.fetchone()
    return int(row[0]) if row else 3600
