"""The audit log and usage counters as the REST routes and the dashboard show them."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import msgspec
from psycopg_pool import AsyncConnectionPool

from app.audit import repository
from app.audit.repository import Filtro, Registro, Uso
from app.auth.access import Identity
from app.context import Backends
from app.errors import BadRequestError
from app.lib.paging import CursorTexto, digest

USAGE_DAYS = 31
DEFAULT_LIMIT = 50
MAX_LIMIT = 500


class ListaAuditoria(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """The audit listing's query: its filters, page size and cursor."""

    chave: Annotated[str, msgspec.Meta(max_length=64)] | None = None
    rota: Annotated[str, msgspec.Meta(max_length=2048)] | None = None
    operacao: Annotated[str, msgspec.Meta(max_length=64)] | None = None
    status: Annotated[int, msgspec.Meta(ge=100, le=599)] | None = None
    desde: datetime | None = None
    ate: datetime | None = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT
    cursor: CursorTexto | None = None

    def filtro(self) -> Filtro:
        return Filtro(chave=self.chave, rota=self.rota, operacao=self.operacao,
                      status=self.status, desde=self.desde, ate=self.ate)  # fmt: skip


class Auditoria(msgspec.Struct, kw_only=True):
    data: list[Registro]
    total: int
    next_cursor: str | None


class UsoConta(msgspec.Struct, kw_only=True):
    plano: str
    limite_por_minuto: int
    data: list[Uso]
    total: int
    next_cursor: str | None = None


async def audit_page(
    backends: Backends, filtro: Filtro, cursor: str | None, limit: int
) -> Auditoria:
    """One page of the audit log, newest first; the cursor is bound to the filters."""
    texts = (filtro.chave, filtro.rota, filtro.operacao)
    if any(value is not None and "\x00" in value for value in texts):
        raise BadRequestError("Filtros da auditoria não aceitam o caractere NUL.")
    request_digest = digest(filtro)
    before = backends.cursors.after_id(cursor, "auditoria", request_digest)
    async with backends.pool.connection() as conn:
        rows = await repository.page(conn, filtro, before, limit + 1)
        total = await repository.count(conn, filtro)
    page, next_cursor = backends.cursors.next_by_id(rows, limit, "auditoria", request_digest)
    return Auditoria(data=page, total=total, next_cursor=next_cursor)


async def usage_of(pool: AsyncConnectionPool, caller: Identity) -> UsoConta:
    """The account's plan and its counters per key and day over the last `USAGE_DAYS` days."""
    async with pool.connection() as conn:
        rows = await repository.usage(conn, caller.conta_id, USAGE_DAYS)
    return UsoConta(plano=caller.plano, limite_por_minuto=caller.limite, data=rows, total=len(rows))
