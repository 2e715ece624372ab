"""`/search/cnae` and `/search/cidade`: autocomplete of activities and municipalities."""

from __future__ import annotations

from typing import Annotated

from elasticsearch import AsyncElasticsearch
from litestar import Response, get
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import FromQuery, QueryParameter

from app.catalog.service import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    CnaePage,
    MunicipioPage,
    search_cities,
    search_cnaes,
)
from app.errors import ErrorBody
from app.lib.responses import json_response
from app.settings import Settings

_ERRORS = {
    400: ResponseSpec(
        data_container=ErrorBody, generate_examples=False, description="Bad query (field named)"
    ),
    503: ResponseSpec(
        data_container=ErrorBody, generate_examples=False, description="No catalog loaded"
    ),
}
_PAGE = (
    f"One page of the best `limit` entries ({DEFAULT_LIMIT} by default, at most {MAX_LIMIT}): "
    "exact names first, then names starting with the text, then by how many establishments "
    "of the live release use the entry (`empresas`)."
)


@get(
    ["/v1/search/cnae", "/search/cnae"],
    summary="CNAE autocomplete",
    description=(
        "CNAE subclasses by code prefix (`47`, `4711`, `4711-3/02`) or by words of the "
        "description (accents and case optional, the last word may be a prefix, one typo per "
        "earlier word), each with its hierarchy (seção, divisão, grupo, classe). " + _PAGE
    ),
    responses={
        200: ResponseSpec(data_container=CnaePage, generate_examples=False, description="CNAEs"),
        **_ERRORS,
    },
    opt={"query": ("query", "limit"), "cost": "buscas"},
    tags=["Busca"],
)
async def cnae_autocomplete(
    text: Annotated[str, QueryParameter(name="query")],
    es: NamedDependency[AsyncElasticsearch],
    settings: NamedDependency[Settings],
    limit: FromQuery[int] = DEFAULT_LIMIT,
) -> Response[bytes]:
    return json_response(await search_cnaes(es, settings.index_alias, text, limit))


@get(
    ["/v1/search/cidade", "/search/cidade"],
    summary="Municipality autocomplete",
    description=(
        "Municipalities by name (accents and case optional, the last word may be a prefix) or "
        "by code (Receita's 4 digits, IBGE's 7), optionally in one `uf`; each with its UF and "
        "both codes, ready for the `municipio` filter of `/seek`. " + _PAGE
    ),
    responses={
        200: ResponseSpec(
            data_container=MunicipioPage, generate_examples=False, description="Municipalities"
        ),
        **_ERRORS,
    },
    opt={"query": ("query", "uf", "limit"), "cost": "buscas"},
    tags=["Busca"],
)
async def city_autocomplete(
    text: Annotated[str, QueryParameter(name="query")],
    es: NamedDependency[AsyncElasticsearch],
    settings: NamedDependency[Settings],
    uf: FromQuery[str | None] = None,
    limit: FromQuery[int] = DEFAULT_LIMIT,
) -> Response[bytes]:
    return json_response(await search_cities(es, settings.index_alias, text, uf, limit))
