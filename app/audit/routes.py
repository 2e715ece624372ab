"""`GET /v1/admin/auditoria`: the audit log, newest first, filtered and paged by cursor; and
`GET /v1/me/uso`: the caller's usage counters."""

from __future__ import annotations

from typing import Any

from litestar import Request, get
from litestar.di import NamedDependency
from psycopg_pool import AsyncConnectionPool

from app.audit.service import Auditoria, ListaAuditoria, UsoConta, audit_page, usage_of
from app.auth.guards import identity, require_admin
from app.context import Backends
from app.lib.body import from_query


@get(
    ["/v1/admin/auditoria", "/admin/auditoria"],
    summary="Audit log (administrator)",
    description=(
        "Authenticated calls, newest first: key id (never the key), method, route (or `/mcp`), "
        "operation (the tool, for the agent interface), path, IP, user agent, status, units and "
        "time. Filters: `chave` (key id), `rota` (route template or path), `operacao`, "
        "`status`, `desde`/`ate` (ISO 8601). `limit` 50 by default, at most 500; pass "
        "`next_cursor` back as `cursor` with the same filters for the next page."
    ),
    guards=[require_admin],
    opt={"query": tuple(ListaAuditoria.__struct_fields__), "query_struct": ListaAuditoria},
    tags=["Admin"],
)
async def audit_log(
    request: Request[Any, Any, Any], backends: NamedDependency[Backends]
) -> Auditoria:
    entrada = from_query(request, ListaAuditoria)
    return await audit_page(backends, entrada.filtro(), entrada.cursor, entrada.limit)


@get(
    ["/v1/me/uso", "/me/uso"],
    summary="My usage",
    description=(
        "The account's plan and rate limit, and per key and day over the last 31 days: "
        "`consultas` (lookups), `buscas` (searches), `analises`, `exportacoes`."
    ),
    tags=["Accounts"],
)
async def my_usage(
    request: Request[Any, Any, Any], pool: NamedDependency[AsyncConnectionPool]
) -> UsoConta:
    return await usage_of(pool, identity(request))
