"""Administrators' pages: the accounts, and the audit log with its filters."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from litestar import Request, get
from litestar.di import NamedDependency
from litestar.response import Template

from app.accounts import repository
from app.audit.repository import Filtro
from app.audit.service import ListaAuditoria, audit_page
from app.context import Backends
from app.errors import BadRequestError, NotFoundError
from app.lib.body import convert
from app.web.render import page
from app.web.visit import Visita, require_admin

PAGE = 50
FILTERS = ("chave", "rota", "operacao", "status", "desde", "ate")
"""The audit log's filters; the first four as the API bounds them (`ListaAuditoria`), the dates
also as a day (`2026-11-25`)."""


@get("/painel/admin/contas", opt={"query": ("pagina",)})
async def accounts_page(
    request: Request[Any, Any, Any],
    visita: NamedDependency[Visita],
    backends: NamedDependency[Backends],
) -> Template:
    require_admin(request, visita)
    raw = request.query_params.get("pagina", "1")
    if not (raw.isascii() and raw.isdecimal() and 0 < len(raw) < 7 and int(raw) >= 1):
        raise BadRequestError("pagina: um número inteiro de 1 em diante.", {"campo": "pagina"})
    pagina = int(raw)
    async with backends.pool.connection() as conn:
        contas = await repository.list_profiles(conn, PAGE, (pagina - 1) * PAGE)
        total = await repository.count_accounts(conn)
    ultima = max((total + PAGE - 1) // PAGE, 1)
    if pagina > ultima:
        raise NotFoundError(f"Não há página {pagina}: a última é a {ultima}.", {"ultima": ultima})
    return page(request, visita, "admin_contas.html", contas=contas, total=total, pagina=pagina,
                ultima=ultima)  # fmt: skip


def _filter(values: dict[str, str]) -> Filtro:
    def moment(name: str) -> datetime | None:
        raw = values.get(name)
        if not raw:
            return None
        try:
            return datetime.fromisoformat(raw[:40])
        except ValueError:
            raise BadRequestError(
                f"{name}: use uma data ISO 8601 (2026-11-25 ou 2026-11-25T10:00)."
            ) from None

    given = {
        name: values[name] for name in ("chave", "rota", "operacao", "status") if values.get(name)
    }
    bounded = convert(given, ListaAuditoria, strict=False)  # the API's bounds, in its words
    return Filtro(
        chave=bounded.chave, rota=bounded.rota, operacao=bounded.operacao, status=bounded.status,
        desde=moment("desde"), ate=moment("ate"),
    )  # fmt: skip


@get("/painel/admin/auditoria", opt={"query": (*FILTERS, "cursor")})
async def audit_log_page(
    request: Request[Any, Any, Any],
    visita: NamedDependency[Visita],
    backends: NamedDependency[Backends],
) -> Template:
    require_admin(request, visita)
    values = {name: request.query_params.get(name, "").strip() for name in FILTERS}
    try:
        filtro = _filter(values)
    except BadRequestError as error:
        return page(request, visita, "admin_auditoria.html", status=400, erro=error.message,
                    valores=values, registros=None)  # fmt: skip
    registros = await audit_page(backends, filtro, request.query_params.get("cursor"), PAGE)
    return page(request, visita, "admin_auditoria.html", valores=values, registros=registros)


ROUTES = [accounts_page, audit_log_page]
