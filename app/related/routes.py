"""`/v1/relacionadas` and `/v1/similares/{cnpj}`: the REST twins of the agent tools
`encontrar_empresas_relacionadas` and `encontrar_empresas_similares`."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, get
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import FromPath

from app.context import Backends
from app.lib.body import convert, single_values
from app.lib.operations import meter
from app.lib.responses import json_response
from app.lib.rest import query_route
from app.lookup.routes import ERRORS
from app.related.service import (
    ENCONTRAR_RELACIONADAS,
    BuscaRelacionadas,
    Relacionadas,
    relacionadas,
)
from app.related.similar import ENCONTRAR_SIMILARES, BuscaSimilares, Similares, similares

related = query_route(
    ["/v1/relacionadas", "/relacionadas"],
    name="related",
    operation=ENCONTRAR_RELACIONADAS,
    input=BuscaRelacionadas,
    output=Relacionadas,
    run=relacionadas,
    summary="Companies sharing a partner, phone, e-mail or address",
    description=(
        "`kind` (socio, telefone, email, endereco) and `value`: the value itself (a partner's "
        "name, a phone with DDD, an e-mail, `CEP número`) or a CNPJ, whose own partners, "
        "phones, e-mails or address are looked for in other companies (its own company left "
        "out). Each company lists what it shares (`em_comum`). Sorted by CNPJ; `limit` 20 by "
        "default, at most 100; `next_cursor` for the next page. Twin of the agent tool "
        "`encontrar_empresas_relacionadas`."
    ),
    tags=["Sócios"],
    errors=ERRORS,
)


@get(
    ["/v1/similares/{cnpj:path}", "/similares/{cnpj:path}"],
    summary="Companies similar to a CNPJ",
    description=(
        "Active companies of the same CNAE class as the CNPJ, in its município, its UF "
        "(`escopo=uf`, the default) or all of Brazil, ranked by what more they share (the same "
        "subclass, porte, capital range, município), each with its reasons (`motivos`). `limit` "
        "10 by default, at most 50. Twin of the agent tool `encontrar_empresas_similares`."
    ),
    responses={
        200: ResponseSpec(data_container=Similares, generate_examples=False, description="OK"),
        **ERRORS,
    },
    opt={"query": ("escopo", "limit"), "query_struct": BuscaSimilares},
    tags=["CNPJ"],
)
async def similar(
    request: Request[Any, Any, Any], cnpj: FromPath[str], backends: NamedDependency[Backends]
) -> Response[bytes]:
    await meter(request, ENCONTRAR_SIMILARES)
    params = {**single_values(request.query_params.dict()), "cnpj": cnpj}
    return json_response(await similares(backends, convert(params, BuscaSimilares, strict=False)))
