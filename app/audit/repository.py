"""All SQL of the audit log and the usage counters."""

from __future__ import annotations

from collections import Counter
from datetime import date, datetime

import msgspec
from psycopg import AsyncConnection
from psycopg.rows import class_row

COSTS = ("consultas", "buscas", "analises", "exportacoes")
"""Usage counters per key, after the spec's cost column (1 query, 1 search, 1 analysis...)."""


class Chamada(msgspec.Struct, kw_only=True, frozen=True):
    """One authenticated call. Never the key: its public id only."""

    chave_id: str
    metodo: str
    rota: str
    """The face: the REST route's path template, or `/mcp` for the agent interface."""
    operacao: str | None = None
    """The service operation the call ran (`consultar_cnpj`, `buscar_empresas`...); null for
    calls that ran none (key management, refused calls)."""
    caminho: str
    ip: str | None
    user_agent: str
    status: int
    em: datetime
    unidades: int = 1


class Entrada(Chamada, kw_only=True, frozen=True):
    """A call on its way to the log."""

    custo: str | None = None
    """One of `COSTS`, or None for calls that count for nothing (key management...)."""


class Registro(Chamada, kw_only=True, frozen=True):
    """A call as the log lists it."""

    id: int


class Filtro(msgspec.Struct, kw_only=True, frozen=True):
    chave: str | None = None
    rota: str | None = None
    operacao: str | None = None
    status: int | None = None
    desde: datetime | None = None
    ate: datetime | None = None


_COPY = """
COPY auditoria (chave_id, metodo, rota, operacao, caminho, ip, user_agent, status, em, unidades)
FROM STDIN
"""

_USAGE = {
    cost: f"""
    INSERT INTO uso_chaves (chave_id, dia, {cost}) VALUES (%s, %s, %s)
    ON CONFLICT (chave_id, dia) DO UPDATE SET {cost} = uso_chaves.{cost} + EXCLUDED.{cost}
    """  # noqa: S608 - the column comes from the constant COSTS, never from a caller
    for cost in COSTS
}


def charged(status: int) -> bool:
    """Whether a call counts in the key's usage: one the service answered (2xx, 304, and 404,
    the answer that no such company exists). A refusal (400, 401, 403, 409, 413, 429...) or a
    failure of ours (5xx) costs nothing; the audit row records it all the same."""
    return status < 400 or status == 404


async def write(conn: AsyncConnection, rows: list[Entrada]) -> None:
    """Inserts the rows, adds those `charged` to the usage counters and moves each key's last
    use."""
    async with conn.cursor() as cursor:
        # COPY: a batch is one stream of rows, far less work per row than an INSERT each.
        async with cursor.copy(_COPY) as copy:
            for r in rows:
                await copy.write_row(
                    (r.chave_id, r.metodo, r.rota, r.operacao, r.caminho, r.ip, r.user_agent,
                     r.status, r.em, r.unidades)
                )  # fmt: skip
        usage: Counter[tuple[str, str, date]] = Counter()
        for r in rows:
            if r.custo in _USAGE and charged(r.status):
                usage[(r.custo, r.chave_id, r.em.date())] += r.unidades
        for (cost, key_id, day), count in sorted(usage.items()):
            await cursor.execute(_USAGE[cost], (key_id, day, count))
        last: dict[str, datetime] = {}
        for r in rows:
            last[r.chave_id] = max(last.get(r.chave_id, r.em), r.em)
        await cursor.executemany(
            "UPDATE chaves SET ultimo_uso = GREATEST(ultimo_uso, %s) WHERE id = %s",
            [(when, key_id) for key_id, when in sorted(last.items())],
        )


WHERE = """
WHERE (%(chave)s::text IS NULL OR chave_id = %(chave)s)
  AND (%(rota)s::text IS NULL OR rota = %(rota)s OR caminho = %(rota)s)
  AND (%(operacao)s::text IS NULL OR operacao = %(operacao)s)
  AND (%(status)s::int IS NULL OR status = %(status)s)
  AND (%(desde)s::timestamptz IS NULL OR em >= %(desde)s)
  AND (%(ate)s::timestamptz IS NULL OR em < %(ate)s)
"""


async def count(conn: AsyncConnection, filtro: Filtro) -> int:
    cursor = await conn.execute(
        "SELECT count(*) FROM auditoria" + WHERE,  # noqa: S608 - constant text
        msgspec.structs.asdict(filtro),
    )
    row = await cursor.fetchone()
    return int(row[0]) if row else 0


async def page(
    conn: AsyncConnection, filtro: Filtro, before: int | None, limit: int
) -> list[Registro]:
    """Rows newest first, `limit` of them, with ids below `before` when given."""
    cursor = conn.cursor(row_factory=class_row(Registro))
    await cursor.execute(
        "SELECT id, chave_id, metodo, rota, operacao, caminho, host(ip) AS ip, user_agent, "
        "status, em, unidades "
        "FROM auditoria" + WHERE + " AND (%(before)s::bigint IS NULL OR id < %(before)s) "
        "ORDER BY id DESC LIMIT %(limit)s",
        {**msgspec.structs.asdict(filtro), "before": before, "limit": limit},
    )
    return await cursor.fetchall()


class Uso(msgspec.Struct, kw_only=True):
    chave_id: str
    dia: date
    consultas: int
    buscas: int
    analises: int
    exportacoes: int


async def usage(conn: AsyncConnection, conta_id: int, days: int) -> list[Uso]:
    """The account's usage counters per key and day, for the last `days` days, newest first."""
    cursor = conn.cursor(row_factory=class_row(Uso))
    await cursor.execute(
        """
        SELECT u.chave_id, u.dia, u.consultas, u.buscas, u.analises, u.exportacoes
        FROM uso_chaves u JOIN chaves k ON k.id = u.chave_id
        WHERE k.conta_id = %s AND u.dia > current_date - %s
        ORDER BY u.dia DESC, u.chave_id
        """,
        (conta_id, days),
    )
    return await cursor.fetchall()
