"""`GET /v1/cnpj/{cnpj}` (alias `/cnpj/{cnpj}`): the full record of one establishment."""

from __future__ import annotations

from elasticsearch import AsyncElasticsearch
from litestar import Response, get
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import FromPath

from app.domain.record import Empresa
from app.errors import ErrorBody
from app.lib.responses import json_response
from app.lookup.service import get_company, parse_cnpj
from app.settings import Settings

ERRORS = {
    400: ResponseSpec(
        data_container=ErrorBody,
        generate_examples=False,
        description="Malformed CNPJ or bad check digits",
    ),
    404: ResponseSpec(
        data_container=ErrorBody,
        generate_examples=False,
        description="No establishment with this CNPJ",
    ),
    503: ResponseSpec(
        data_container=ErrorBody, generate_examples=False, description="The index is not available"
    ),
}


@get(
    ["/v1/cnpj/{cnpj:path}", "/cnpj/{cnpj:path}"],
    summary="Company record by CNPJ",
    description=(
        "Full record of one establishment. Accepts 14 characters with or without punctuation "
        "(`33683111000280`, `33.683.111/0002-80`) and alphanumeric CNPJs (`12ABC34501DE35`)."
    ),
    responses={
        200: ResponseSpec(
            data_container=Empresa, generate_examples=False, description="The record"
        ),
        **ERRORS,
    },
    tags=["CNPJ"],
)
async def lookup_cnpj(
    cnpj: FromPath[str],
    es: NamedDependency[AsyncElasticsearch],
    settings: NamedDependency[Settings],
) -> Response[bytes]:
    number = parse_cnpj(cnpj.strip("/"))
    return json_response(await get_company(es, settings.index_alias, number))
