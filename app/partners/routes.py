"""`GET /socios/{cnpj}` (alias `/v1/socios/{cnpj}`): the QSA and the companies it ties to."""

from __future__ import annotations

from elasticsearch import AsyncElasticsearch
from litestar import Response, get
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import FromPath, FromQuery

from app.lib.paging import Cursors
from app.lib.responses import json_response
from app.lookup.routes import ERRORS
from app.lookup.service import parse_cnpj
from app.partners.related import DEFAULT_LIMIT, Pagina, check_filters, related
from app.partners.service import Quadro, partners
from app.settings import Settings


@get(
    ["/socios/{cnpj:path}", "/v1/socios/{cnpj:path}"],
    summary="Partners (QSA) and related companies",
    description=(
        "The partners of the company (name, qualificação, data de entrada, faixa etária, país, "
        "representante legal) and the other companies with a partner of the same name and "
        "document (Receita masks CPFs), one establishment per company, at most 50."
    ),
    responses={
        200: ResponseSpec(data_container=Quadro, generate_examples=False, description="The QSA"),
        **ERRORS,
    },
    opt={"cost": "consultas"},
    tags=["Sócios"],
)
async def company_partners(
    cnpj: FromPath[str],
    es: NamedDependency[AsyncElasticsearch],
    settings: NamedDependency[Settings],
) -> Response[bytes]:
    number = parse_cnpj(cnpj.strip("/"))
    return json_response(await partners(es, settings.index_alias, number))


@get(
    ["/socios/relacionados", "/v1/socios/relacionados"],
    summary="Companies of a partner",
    description=(
        "Companies with a partner matching `nome` (normalised: accents, case and suffixes do "
        "not matter), `doc` (a CPF, its 6 middle digits, Receita's `***NNNNNN**`, or a CNPJ) "
        "and/or `idade` (Receita's age band 0-9, with `nome`). Paged: `limit` (default 20, at "
        "most 100) and the opaque `next_cursor` of the previous page."
    ),
    responses={
        200: ResponseSpec(data_container=Pagina, generate_examples=False, description="A page"),
        400: ERRORS[400],
    },
    opt={"query": ("nome", "doc", "idade", "limit", "cursor"), "cost": "buscas"},
    tags=["Sócios"],
)
async def partner_companies(
    es: NamedDependency[AsyncElasticsearch],
    settings: NamedDependency[Settings],
    cursors: NamedDependency[Cursors],
    nome: FromQuery[str | None] = None,
    doc: FromQuery[str | None] = None,
    idade: FromQuery[str | None] = None,
    limit: FromQuery[int] = DEFAULT_LIMIT,
    cursor: FromQuery[str | None] = None,
) -> Response[bytes]:
    filters = check_filters(nome, doc, idade)
    return json_response(await related(es, settings.index_alias, cursors, filters, limit, cursor))
