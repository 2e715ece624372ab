"""`/search/cnae` and `/search/cidade`: autocomplete of activities and municipalities."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, get
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec

from app.catalog.service import (
    AUTOCOMPLETAR_CIDADE,
    AUTOCOMPLETAR_CNAE,
    DEFAULT_LIMIT,
    MAX_LIMIT,
    BuscaCidade,
    BuscaCnae,
    CnaePage,
    MunicipioPage,
    search_cities,
    search_cnaes,
)
from app.context import Backends
from app.errors import ErrorBody
from app.lib.body import from_query
from app.lib.operations import meter
from app.lib.responses import json_response

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
    opt={"query": tuple(BuscaCnae.__struct_fields__)},
    tags=["Busca"],
)
async def cnae_autocomplete(
    request: Request[Any, Any, Any], backends: NamedDependency[Backends]
) -> Response[bytes]:
    await meter(request, AUTOCOMPLETAR_CNAE)
    return json_response(await search_cnaes(backends, from_query(request, BuscaCnae)))


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
    opt={"query": tuple(BuscaCidade.__struct_fields__)},
    tags=["Busca"],
)
async def city_autocomplete(
    request: Request[Any, Any, Any], backends: NamedDependency[Backends]
) -> Response[bytes]:
    await meter(request, AUTOCOMPLETAR_CIDADE)
    return json_response(await search_cities(backends, from_query(request, BuscaCidade)))
