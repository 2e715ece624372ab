"""`GET /socios/{cnpj}` (alias `/v1/socios/{cnpj}`): the QSA and the companies it ties to."""

from __future__ import annotations

from elasticsearch import AsyncElasticsearch
from litestar import Response, get
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import FromPath

from app.lib.responses import json_response
from app.lookup.routes import ERRORS
from app.lookup.service import parse_cnpj
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
    tags=["Sócios"],
)
async def company_partners(
    cnpj: FromPath[str],
    es: NamedDependency[AsyncElasticsearch],
    settings: NamedDependency[Settings],
) -> Response[bytes]:
    number = parse_cnpj(cnpj.strip("/"))
    return json_response(await partners(es, settings.index_alias, number))
