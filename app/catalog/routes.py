"""`/search/cnae` and `/search/cidade`: autocomplete of activities and municipalities."""

from __future__ import annotations

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
from app.errors import ErrorBody
from app.lib.rest import query_route

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


cnae_autocomplete = query_route(
    ["/v1/search/cnae", "/search/cnae"],
    name="cnae_autocomplete",
    operation=AUTOCOMPLETAR_CNAE,
    input=BuscaCnae,
    output=CnaePage,
    run=search_cnaes,
    summary="CNAE autocomplete",
    description=(
        "CNAE subclasses by code prefix (`47`, `4711`, `4711-3/02`) or by words of the "
        "description (accents and case optional, the last word may be a prefix, one typo per "
        "earlier word), each with its hierarchy (seção, divisão, grupo, classe). " + _PAGE
    ),
    tags=["Busca"],
    errors=_ERRORS,
)

city_autocomplete = query_route(
    ["/v1/search/cidade", "/search/cidade"],
    name="city_autocomplete",
    operation=AUTOCOMPLETAR_CIDADE,
    input=BuscaCidade,
    output=MunicipioPage,
    run=search_cities,
    summary="Municipality autocomplete",
    description=(
        "Municipalities by name (accents and case optional, the last word may be a prefix) or "
        "by code (Receita's 4 digits, IBGE's 7), optionally in one `uf`; each with its UF and "
        "both codes, ready for the `municipio` filter of `/seek`. " + _PAGE
    ),
    tags=["Busca"],
    errors=_ERRORS,
)
