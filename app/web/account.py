"""The account's pages: its usage over the last days as a chart, and its API keys (create,
shown once; allowlist; revoke after a confirmation)."""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, date, datetime, timedelta
from typing import Any

import msgspec
from litestar import Request, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath
from litestar.response import Template
from litestar.response.base import Response

from app.accounts import service
from app.accounts.service import NovaChave
from app.audit.service import USAGE_DAYS, usage_of
from app.auth.gate import Gate
from app.context import Backends
from app.errors import AppError, BadRequestError, NotFoundError
from app.lib.body import convert
from app.web.render import action, page, redirect, text
from app.web.visit import Visita, require_account

COSTS = ("consultas", "buscas", "analises", "exportacoes")


class Dia(msgspec.Struct, kw_only=True):
    dia: date
    custos: dict[str, int]
    total: int


def days_of(rows: list[Any], today: date) -> list[Dia]:
    """Each of the last `USAGE_DAYS` days, oldest first, with its costs summed over keys."""
    per_day: dict[date, dict[str, int]] = defaultdict(lambda: dict.fromkeys(COSTS, 0))
    for row in rows:
        for cost in COSTS:
            per_day[row.dia][cost] += getattr(row, cost)
    days = [today - timedelta(days=back) for back in range(USAGE_DAYS - 1, -1, -1)]
    return [Dia(dia=d, custos=per_day[d], total=sum(per_day[d].values())) for d in days]


@get("/painel")
async def home(
    request: Request[Any, Any, Any],
    visita: NamedDependency[Visita],
    backends: NamedDependency[Backends],
) -> Template:
    perfil = require_account(request, visita)
    uso = await usage_of(backends.pool, visita.identity)
    dias = days_of(uso.data, datetime.now(UTC).date())
    por_chave: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(COSTS, 0))
    for row in uso.data:
        for cost in COSTS:
            por_chave[row.chave_id][cost] += getattr(row, cost)
    return page(
        request, visita, "inicio.html", perfil=perfil, uso=uso, dias=dias,
        maximo=max((d.total for d in dias), default=0), por_chave=dict(por_chave), custos=COSTS,
    )  # fmt: skip


async def _keys_page(
    request: Request[Any, Any, Any], visita: Visita, backends: Backends, status: int = 200,
    failure: Exception | None = None, **context: Any,
) -> Template:  # fmt: skip
    perfil = require_account(request, visita)
    chaves = await service.list_keys(backends.pool, perfil.id)
    revoked = {c.id for c in chaves if c.revogada_em is not None}
    if context.get("revogada") not in revoked:  # a notice only for a key this account revoked
        context["revogada"] = None
    return page(request, visita, "chaves.html", status=status, failure=failure, chaves=chaves,
                maximo=service.MAX_ACTIVE_KEYS, **context)  # fmt: skip


@get("/painel/chaves", opt={"query": ("revogada",)})
async def keys_page(
    request: Request[Any, Any, Any],
    visita: NamedDependency[Visita],
    backends: NamedDependency[Backends],
) -> Template:
    return await _keys_page(
        request, visita, backends, revogada=request.query_params.get("revogada")
    )


@post("/painel/chaves", status_code=200)
async def create_key(
    request: Request[Any, Any, Any],
    visita: NamedDependency[Visita],
    backends: NamedDependency[Backends],
    gate: NamedDependency[Gate],
) -> Template:
    perfil, form = await action(request, visita, backends, gate)
    try:
        service.check_key_by_code(perfil.papel)
        if not text(form, "rotulo"):
            raise BadRequestError(
                "Dê um rótulo à chave (até 100 caracteres), como produção ou agente.",
                details={"campo": "rotulo"},
            )
        entrada = convert(
            {"rotulo": text(form, "rotulo"), "allowlist": _networks(text(form, "allowlist"))},
            NovaChave,
        )
        criada = await service.create_key(backends.pool, backends.settings, perfil.id, entrada)
    except AppError as error:
        return await _keys_page(request, visita, backends, status=error.status, failure=error,
                                erro_criar=error.message, valores=form)  # fmt: skip
    return page(request, visita, "chave_criada.html", criada=criada,
                mcp_url=backends.settings.public_url.rstrip("/") + "/mcp")  # fmt: skip


def _networks(raw: str) -> list[str]:
    return [item for item in raw.replace(",", " ").split() if item]


async def _own_key(backends: Backends, conta_id: int, key_id: str) -> Any:
    for chave in await service.list_keys(backends.pool, conta_id):
        if chave.id == key_id:
            return chave
    raise NotFoundError(service.KEY_NOT_FOUND)


@get("/painel/chaves/{key_id:str}/revogar")
async def confirm_revoke(
    request: Request[Any, Any, Any],
    visita: NamedDependency[Visita],
    backends: NamedDependency[Backends],
    key_id: FromPath[str],
) -> Template:
    perfil = require_account(request, visita)
    service.check_key_by_code(perfil.papel)
    chave = await _own_key(backends, perfil.id, key_id[:64])
    return page(request, visita, "revogar.html", chave=chave)


@post("/painel/chaves/{key_id:str}/revogar", status_code=303)
async def revoke_key(
    request: Request[Any, Any, Any],
    visita: NamedDependency[Visita],
    backends: NamedDependency[Backends],
    gate: NamedDependency[Gate],
    key_id: FromPath[str],
) -> Response[Any]:
    perfil, _ = await action(request, visita, backends, gate)
    service.check_key_by_code(perfil.papel)
    chave = await service.revoke_key(backends.pool, gate, perfil.id, key_id[:64])
    return redirect(visita, f"/painel/chaves?revogada={chave.id}")


def _shown(key_id: str) -> str:
    """The key id as a page may repeat it: only the shape of a key's id (no control characters
    nor markup from the address)."""
    return key_id if service.KEY_ID.fullmatch(key_id) else ""


@post("/painel/chaves/{key_id:str}/allowlist", status_code=303)
async def set_allowlist(
    request: Request[Any, Any, Any],
    visita: NamedDependency[Visita],
    backends: NamedDependency[Backends],
    gate: NamedDependency[Gate],
    key_id: FromPath[str],
) -> Template | Response[Any]:
    perfil, form = await action(request, visita, backends, gate)
    try:
        service.check_key_by_code(perfil.papel)
        await service.change_allowlist(
            backends.pool, gate, perfil.id, key_id[:64], _networks(text(form, "allowlist"))
        )
    except AppError as error:
        return await _keys_page(request, visita, backends, status=error.status, failure=error,
                                erro_allowlist={"chave": _shown(key_id), "mensagem": error.message,
                                                "valor": text(form, "allowlist")})  # fmt: skip
    return redirect(visita, "/painel/chaves")


ROUTES = [home, keys_page, create_key, confirm_revoke, revoke_key, set_allowlist]
