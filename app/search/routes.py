"""`/search`, `/seek` and `/nome`: company search by name and structured filters."""

from __future__ import annotations

from typing import Any

import msgspec
from elasticsearch import AsyncElasticsearch
from litestar import Request, Response, get, post
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec

from app.errors import BadRequestError, ErrorBody
from app.lib import paging
from app.lib.responses import json_response
from app.search import filters as f
from app.search.names import name_query, ranking_boosts, words
from app.search.service import Pagina, search
from app.settings import Settings

NOT_FOR_SEARCH = ("nome",)
NOT_FOR_SEEK = ("q",)
NOME_FIELDS = ("nome", "uf", "limit", "cursor")
_PAGING = ("limit", "cursor", "facets")

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


def query_filters(request: Request[Any, Any, Any]) -> f.Filtros:
    params = request.query_params.dict()
    repeated = sorted(name for name, values in params.items() if len(values) > 1)
    if repeated:
        raise BadRequestError(
            f"Parâmetro repetido: {', '.join(repeated)}.", details={"campo": repeated[0]}
        )
    return f.from_query({name: values[0] for name, values in params.items()})


def _refuse(filters: f.Filtros, names: tuple[str, ...], hint: str) -> None:
    for name in names:
        if getattr(filters, name) is not None:
            raise BadRequestError(
                f"{name} não é aceito aqui: {hint}.", details={"campo": name, "aceitos": f.FIELDS}
            )


def applied(filters: f.Filtros, terms: list[str]) -> dict[str, Any]:
    shown: dict[str, Any] = msgspec.to_builtins(filters)
    for name in _PAGING:
        shown.pop(name, None)
    if terms:
        shown["termos"] = terms
    return shown


async def run(
    es: AsyncElasticsearch,
    settings: Settings,
    cursors: paging.Cursors,
    filters: f.Filtros,
    *,
    route: str,
    text: str | None,
    trade_weight: float = 1.0,
    partners: bool = False,
) -> Response[bytes]:
    f.check_common(filters)
    name = "q" if route == "search" else "nome"
    terms = words(text) if text is not None else []
    if text is not None and not terms:
        raise f.bad(name, f"{name}: sem letras nem algarismos para buscar.", text)
    clauses = f.clauses(filters)
    if not terms and not clauses:
        raise BadRequestError(
            f"Informe {name} ou ao menos um filtro.", details={"aceitos": f.FIELDS}
        )
    matched = name_query(text, trade_weight=trade_weight, partners=partners) if text else None
    must = matched or {"match_all": {}}
    query = {"bool": {"must": [must], "filter": clauses, "should": ranking_boosts()}}
    request = {"route": route, **applied(filters, terms)}
    page = await search(
        es,
        settings.index_alias,
        cursors,
        query,
        limit=filters.limit,
        cursor=filters.cursor,
        request_digest=paging.digest(request),
        facets=[] if filters.cursor else f.facet_names(filters),
    )
    page.filtros = applied(filters, terms)
    return json_response(page)


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
    opt={
        "query": tuple(name for name in f.FIELDS if name not in NOT_FOR_SEARCH),
        "cost": "buscas",
    },
)
async def search_get(
    request: Request[Any, Any, Any],
    es: NamedDependency[AsyncElasticsearch],
    settings: NamedDependency[Settings],
    cursors: NamedDependency[paging.Cursors],
) -> Response[bytes]:
    filters = query_filters(request)
    return await run(es, settings, cursors, filters, route="search", text=filters.q, partners=True)


@post(
    ["/v1/search", "/search"],
    summary="Search companies (JSON body)",
    description=_SEARCH_DOC + " The body takes the same fields as the query string.",
    responses=RESPONSES,
    tags=["Busca"],
    status_code=200,
    opt={"cost": "buscas"},
)
async def search_post(
    request: Request[Any, Any, Any],
    es: NamedDependency[AsyncElasticsearch],
    settings: NamedDependency[Settings],
    cursors: NamedDependency[paging.Cursors],
) -> Response[bytes]:
    filters = f.from_body(await request.body())
    _refuse(filters, NOT_FOR_SEARCH, "use q")
    return await run(es, settings, cursors, filters, route="search", text=filters.q, partners=True)


@get(
    ["/v1/seek", "/seek"],
    summary="Advanced search (query string)",
    description=_SEEK_DOC,
    responses=RESPONSES,
    tags=["Busca"],
    opt={
        "query": tuple(name for name in f.FIELDS if name not in NOT_FOR_SEEK),
        "cost": "buscas",
    },
)
async def seek_get(
    request: Request[Any, Any, Any],
    es: NamedDependency[AsyncElasticsearch],
    settings: NamedDependency[Settings],
    cursors: NamedDependency[paging.Cursors],
) -> Response[bytes]:
    filters = query_filters(request)
    return await run(es, settings, cursors, filters, route="seek", text=filters.nome)


@post(
    ["/v1/seek", "/seek"],
    summary="Advanced search (JSON body)",
    description=_SEEK_DOC + " The body takes the same fields as the query string.",
    responses=RESPONSES,
    tags=["Busca"],
    status_code=200,
    opt={"cost": "buscas"},
)
async def seek_post(
    request: Request[Any, Any, Any],
    es: NamedDependency[AsyncElasticsearch],
    settings: NamedDependency[Settings],
    cursors: NamedDependency[paging.Cursors],
) -> Response[bytes]:
    filters = f.from_body(await request.body())
    _refuse(filters, NOT_FOR_SEEK, "use nome")
    return await run(es, settings, cursors, filters, route="seek", text=filters.nome)


@get(
    ["/v1/nome", "/nome"],
    summary="Company by trade or legal name",
    description=(
        "The company the user means by a trade or legal name (`nome`), trade name weighted "
        "first; optional `uf`. Same tolerance, ranking and paging as `/search`."
    ),
    responses=RESPONSES,
    tags=["Busca"],
    opt={"query": NOME_FIELDS, "cost": "buscas"},
)
async def by_name(
    request: Request[Any, Any, Any],
    es: NamedDependency[AsyncElasticsearch],
    settings: NamedDependency[Settings],
    cursors: NamedDependency[paging.Cursors],
) -> Response[bytes]:
    filters = query_filters(request)
    if filters.nome is None:
        raise f.bad("nome", "Informe nome.")
    return await run(
        es, settings, cursors, filters, route="nome", text=filters.nome, trade_weight=1.5
    )
