"""The account's lots: their state, and the file of a finished one."""

from __future__ import annotations

import re
import uuid
from typing import Any

from litestar import Request, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath
from litestar.response import Response, Stream, Template

from app.auth.gate import Gate
from app.context import Backends
from app.errors import AppError, BadRequestError
from app.leads import lots
from app.leads.formats import FORMATS
from app.leads.lots import ListaLotes, NovoLote
from app.leads.service import USO_RESPONSAVEL
from app.lib.body import convert
from app.lib.download import download
from app.web.render import NO_STORE, action, page, redirect, text
from app.web.visit import Visita, require_account

SEARCH_TO_LOT = {
    "cnae": "cnae", "cnae_secundario": "incluir_secundarias", "uf": "uf", "municipio": "cidade",
    "porte": "porte", "situacao": "situacao", "com_email": "com_email",
    "com_telefone": "com_telefone", "matriz": "matriz", "simples": "simples", "mei": "mei",
    "capital_min": "capital_min", "capital_max": "capital_max", "abertura_de": "abertura_de",
    "abertura_ate": "abertura_ate",
}  # fmt: skip
"""The search's filters a lot takes, by the lot's name (a name search has no lot filter: a lot
ranks the companies of its activity and place by score)."""


LOT_TO_SEARCH = {lot: search for search, lot in SEARCH_TO_LOT.items()}


def lot_filters(values: dict[str, str]) -> dict[str, str]:
    return {SEARCH_TO_LOT[k]: v for k, v in values.items() if k in SEARCH_TO_LOT and v}


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


@get("/painel/lotes/novo", opt={"query": (*SEARCH_TO_LOT, "q")})
async def new_lot(
    request: Request[Any, Any, Any],
    visita: NamedDependency[Visita],
) -> Template:
    """The export form of a search: its filters, a quantity, a format and the LGPD notice."""
    require_account(request, visita)
    values = {k: request.query_params.get(k, "")[:400] for k in SEARCH_TO_LOT}
    # A key per form shown: a double click, or the form sent again, makes one lot.
    kept = {k: v for k, v in values.items() if v} | {"chave_idempotencia": str(uuid.uuid4())}
    return page(request, visita, "exportar.html", filtros=lot_filters(values),
                valores=kept, formatos=FORMATS,
                aviso=USO_RESPONSAVEL, nome=request.query_params.get("q", "")[:200])  # fmt: skip


@post("/painel/lotes", status_code=303)
async def create_lot(
    request: Request[Any, Any, Any],
    visita: NamedDependency[Visita],
    backends: NamedDependency[Backends],
    gate: NamedDependency[Gate],
) -> Template | Response[Any]:
    """A lot of the companies of a search's filters (the search page's export)."""
    _, form = await action(request, visita, backends, gate)
    filters = lot_filters({key: text(form, key) for key in SEARCH_TO_LOT})
    agreed = text(form, "uso_responsavel") == "true"
    chave = text(form, "chave_idempotencia")
    try:  # loosely, as a query string: the form's texts to the lot's types, `null` refused
        if not agreed:
            raise BadRequestError(
                "Marque a confirmação de uso responsável dos dados (LGPD) para criar o lote.",
                details={"campo": "uso_responsavel"},
            )
        entrada = convert(
            {**filters, "quantidade": text(form, "quantidade") or "0",
             "formato": text(form, "formato") or "csv",
             "confirmar_lgpd": agreed, "uso_responsavel": agreed,
             **({"chave_idempotencia": chave} if chave else {})},
            NovoLote, strict=False,
        )  # fmt: skip
        await lots.criar(backends, visita.identity, entrada)
    except AppError as error:
        return page(request, visita, "exportar.html", status=error.status, erro=_said(error),
                    failure=error, filtros=filters, valores=form, formatos=FORMATS,
                    aviso=USO_RESPONSAVEL)  # fmt: skip
    return redirect(visita, "/painel/lotes")


def _said(error: AppError) -> str:
    """The refusal with the form's name of the field it names (`municipio`, not the lot's
    `cidade`)."""
    named = error.details.get("campo") if isinstance(error.details, dict) else None
    if not isinstance(named, str) or LOT_TO_SEARCH.get(named, named) == named:
        return error.message
    form_name = LOT_TO_SEARCH[named]
    return re.sub(rf"\b{re.escape(named)}\b", form_name, error.message, count=1)


@get("/painel/lotes/{lote_id:int}/arquivo")
async def lot_file(
    request: Request[Any, Any, Any],
    visita: NamedDependency[Visita],
    backends: NamedDependency[Backends],
    lote_id: FromPath[int],
) -> Stream:
    require_account(request, visita)
    handle, name, media_type = await lots.arquivo(backends, visita.identity, lote_id)
    return download(handle, name, media_type, headers=NO_STORE)


ROUTES = [lots_page, new_lot, create_lot, lot_file]
