"""`/search`, `/seek` and `/nome`: company search by name and structured filters. Each handler
reads the filters from the query string or the body and calls `app.search.service.search`."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, get, post
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec

from app.context import Backends
from app.errors import ErrorBody
from app.lib import release
from app.lib.body import json_bytes, single_values
from app.lib.documented_bodies import any_of_fields
from app.lib.operations import Custo, Operacao, meter
from app.lib.responses import json_response
from app.search import filters as f
from app.search.service import ACCEPTED, HINTS, PAGING, REQUIRED, Modo, Pagina, search

OPERATIONS = {
    Modo.SEARCH: Operacao("busca", Custo.BUSCA),
    Modo.SEEK: Operacao("busca_avancada", Custo.BUSCA),
    Modo.NOME: Operacao("busca_por_nome", Custo.BUSCA),
    Modo.CIDADES: Operacao("busca_por_cidade", Custo.BUSCA),
}

RESPONSES = {
    200: ResponseSpec(data_container=Pagina, generate_examples=False, description="One page"),
    400: ResponseSpec(
        data_container=ErrorBody,
        generate_examples=False,
        description="Unknown filter, bad value (the field is named), bad cursor",
    ),
    503: ResponseSpec(
        data_container=ErrorBody, generate_examples=False, description="The index is not available"
    ),
}


def body_opt(mode: Modo) -> dict[str, Any]:
    """How the document shows a mode's JSON body: the fields it takes, a name or a filter."""
    fields = ACCEPTED[mode]
    needed = [name for name in fields if name not in PAGING]
    return {"body_struct": f.Filtros, "body_fields": fields, "body_rules": any_of_fields(needed)}


def query_filters(request: Request[Any, Any, Any]) -> f.Filtros:
    return f.from_query(single_values(request.query_params.dict()))


async def answer(
    request: Request[Any, Any, Any], backends: Backends, filters: f.Filtros, mode: Modo
) -> Response[bytes]:
    await meter(request, OPERATIONS[mode])
    page = await search(backends, filters, mode)
    answer = json_response(page)
    answer.headers.update(release.header(page.data_referencia))
    return answer


_SEARCH_DOC = (
    "Full text over legal name, trade name and partner names (`q`), combined with any of the "
    "`/seek` filters. Tolerates accents, case, punctuation, legal suffixes, abbreviations, word "
    "order, a typo per word, joined or split words and a prefix being typed. Sorted by "
    "relevance (exact name, phrase, active, matriz first). `{data, total, next_cursor}`; "
    f"`limit` {f.DEFAULT_LIMIT} by default, at most {f.MAX_LIMIT}; pass `next_cursor` back as "
    "`cursor` for the next page; `facets=uf,cnae,municipio,situacao` adds counts."
)
_SEEK_DOC = (
    "Advanced search: `nome` (legal or trade name), `uf`, `cnae` (2-7 digits; "
    "`cnae_secundario=true` to include secondary activities), `telefone`, `email`, "
    "`municipio` (name, Receita or IBGE code), `cep` (8 digits or a prefix), `ddd`, "
    "`capital_min`/`capital_max`, `abertura_de`/`abertura_ate` (YYYY-MM-DD), `porte`, "
    "`natureza`, `situacao`, `matriz`, `simples`, `mei`, `com_email`, `com_telefone`. Lists "
    "(`uf`, `porte`, `situacao`) take comma-separated values. Unknown filters and bad values "
    "are 400s naming the field. Paging and facets as `/search`."
)


@get(
    ["/v1/search", "/search"],
    summary="Search companies (query string)",
    description=_SEARCH_DOC,
    responses=RESPONSES,
    tags=["Busca"],
    opt={"query": ACCEPTED[Modo.SEARCH], "query_struct": f.Filtros, "query_hints": HINTS},
)
async def search_get(
    request: Request[Any, Any, Any], backends: NamedDependency[Backends]
) -> Response[bytes]:
    return await answer(request, backends, query_filters(request), Modo.SEARCH)


@post(
    ["/v1/search", "/search"],
    summary="Search companies (JSON body)",
    description=_SEARCH_DOC + " The body takes the same fields as the query string.",
    responses=RESPONSES,
    tags=["Busca"],
    status_code=200,
    opt=body_opt(Modo.SEARCH),
)
async def search_post(
    request: Request[Any, Any, Any], backends: NamedDependency[Backends]
) -> Response[bytes]:
    filters = f.from_body(await json_bytes(request), ACCEPTED[Modo.SEARCH])
    return await answer(request, backends, filters, Modo.SEARCH)


@get(
    ["/v1/seek", "/seek"],
    summary="Advanced search (query string)",
    description=_SEEK_DOC,
    responses=RESPONSES,
    tags=["Busca"],
    opt={"query": ACCEPTED[Modo.SEEK], "query_struct": f.Filtros, "query_hints": HINTS},
)
async def seek_get(
    request: Request[Any, Any, Any], backends: NamedDependency[Backends]
) -> Response[bytes]:
    return await answer(request, backends, query_filters(request), Modo.SEEK)


@post(
    ["/v1/seek", "/seek"],
    summary="Advanced search (JSON body)",
    description=_SEEK_DOC + " The body takes the same fields as the query string.",
    responses=RESPONSES,
    tags=["Busca"],
    status_code=200,
    opt=body_opt(Modo.SEEK),
)
async def seek_post(
    request: Request[Any, Any, Any], backends: NamedDependency[Backends]
) -> Response[bytes]:
    filters = f.from_body(await json_bytes(request), ACCEPTED[Modo.SEEK])
    return await answer(request, backends, filters, Modo.SEEK)


@get(
    ["/v1/nome", "/nome"],
    summary="Company by trade or legal name",
    description=(
        "The company the user means by a trade or legal name (`nome`), trade name weighted "
        "first; optional `uf`. Same tolerance, ranking and paging as `/search`."
    ),
    responses=RESPONSES,
    tags=["Busca"],
    opt={
        "query": ACCEPTED[Modo.NOME],
        "query_struct": f.Filtros,
        "query_required": REQUIRED[Modo.NOME],
        "query_hints": HINTS,
    },
)
async def by_name(
    request: Request[Any, Any, Any], backends: NamedDependency[Backends]
) -> Response[bytes]:
    return await answer(request, backends, query_filters(request), Modo.NOME)
