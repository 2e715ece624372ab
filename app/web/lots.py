"""The account's lots: their state, and the file of a finished one."""

from __future__ import annotations

from typing import Any

from litestar import Request, get
from litestar.di import NamedDependency
from litestar.params import FromPath
from litestar.response import File, Template

from app.context import Backends
from app.leads import lots
from app.leads.lots import ListaLotes
from app.web.render import NO_STORE, page
from app.web.visit import Visita, require_account


@get("/painel/lotes", opt={"query": ("cursor",)})
async def lots_page(
    request: Request[Any, Any, Any],
    visita: NamedDependency[Visita],
    backends: NamedDependency[Backends],
) -> Template:
    require_account(request, visita)
    cursor = request.query_params.get("cursor")
    lotes = await lots.listar(backends, visita.identity, ListaLotes(cursor=cursor))
    return page(request, visita, "lotes.html", lotes=lotes)


@get("/painel/lotes/{lote_id:int}/arquivo")
async def lot_file(
    request: Request[Any, Any, Any],
    visita: NamedDependency[Visita],
    backends: NamedDependency[Backends],
    lote_id: FromPath[int],
) -> File:
    require_account(request, visita)
    path, name, media_type = await lots.arquivo(backends, visita.identity, lote_id)
    return File(path=path, filename=name, media_type=media_type, headers=NO_STORE)


ROUTES = [lots_page, lot_file]
