"""`/seek/cidades`: companies of one municipality in a CNAE category, and the categories."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, get
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec

from app.context import Backends
from app.lib.responses import json_response
from app.search import filters as f
from app.search.categories import Categorias, listed
from app.search.routes import RESPONSES, answer, query_filters
from app.search.service import ACCEPTED, REQUIRED, Modo


@get(
    ["/v1/seek/cidades", "/seek/cidades"],
    summary="Companies by city and category",
    description=(
        "Establishments of one `municipio` (name, Receita code or IBGE code; add `uf` to tell "
        "namesakes apart) whose primary activity is in the CNAE category `categoria` (a slug "
        "of `/v1/seek/cidades/categorias`); optional `situacao`. Paging and facets as `/seek`."
    ),
    responses=RESPONSES,
    tags=["Busca"],
    opt={
        "query": ACCEPTED[Modo.CIDADES],
        "query_struct": f.Filtros,
        "query_required": REQUIRED[Modo.CIDADES],
    },
)
async def companies_by_city(
    request: Request[Any, Any, Any], backends: NamedDependency[Backends]
) -> Response[bytes]:
    return await answer(request, backends, query_filters(request), Modo.CIDADES)


@get(
    ["/v1/seek/cidades/categorias", "/seek/cidades/categorias"],
    summary="Categories of /seek/cidades",
    description="Each category's slug, name and CNAE codes (subclasses or classes).",
    responses={
        200: ResponseSpec(
            data_container=Categorias, generate_examples=False, description="The categories"
        )
    },
    tags=["Busca"],
)
async def city_categories() -> Response[bytes]:
    return json_response(listed())
