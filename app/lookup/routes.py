"""`GET /v1/cnpj/{cnpj}` (alias `/cnpj/{cnpj}`): the full record of one establishment, and
`/v1/cnpj/contato/{cnpj}`: its contacts."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, get
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import FromPath

from app.auth.access import TOKEN_OPTIONAL, Access
from app.auth.middleware import access
from app.context import Backends
from app.domain.record import Empresa, EmpresaPublica
from app.errors import ErrorBody
from app.lib.operations import meter
from app.lib.responses import json_response
from app.lookup.answer import record_answer
from app.lookup.service import (
    CONSULTAR_CNPJ,
    CONSULTAR_CONTATOS,
    ConsultaCnpj,
    ContatoEmpresa,
    consultar,
    contatos,
)

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
        "(`33683111000280`, `33.683.111/0002-80`) and alphanumeric CNPJs (`12ABC34501DE35`). "
        "Without a key (3 per minute per IP address) the answer leaves out `contato`, `socios` "
        "and `inscricoes_estaduais`, which `restrito` names (`EmpresaPublica`). The answer "
        "carries an `ETag` (the record's content hash and the view); `If-None-Match` with it "
        "gets 304 without a body while the record is unchanged."
    ),
    responses={
        200: ResponseSpec(
            data_container=Empresa | EmpresaPublica,  # type: ignore[arg-type]
            generate_examples=False,
            description="The record (with a key) or its public part (without one)",
        ),
        304: ResponseSpec(
            data_container=None,
            generate_examples=False,
            description="Unchanged since the `ETag` sent in `If-None-Match`",
        ),
        **ERRORS,
    },
    opt={"access": Access.ANONYMOUS},
    security=TOKEN_OPTIONAL,
    tags=["CNPJ"],
)
async def lookup_cnpj(
    request: Request[Any, Any, Any], cnpj: FromPath[str], backends: NamedDependency[Backends]
) -> Response[bytes]:
    await meter(request, CONSULTAR_CNPJ)
    company = await consultar(backends, ConsultaCnpj(cnpj=cnpj))
    state = access(request)
    answer = record_answer(
        company,
        anonymous=state is not None and state.caller.identity is None,
        if_none_match=request.headers.get("if-none-match"),
    )
    return Response(
        answer.body,
        status_code=answer.status,
        headers=answer.headers,
        media_type="application/json",
    )


@get(
    ["/v1/cnpj/contato/{cnpj:path}", "/cnpj/contato/{cnpj:path}"],
    summary="Contacts of a CNPJ",
    description=(
        "Phones (with DDD) and e-mails Receita publishes for the establishment, the syntax "
        "check of each (`validacao`) and whether a valid one exists (`disponibilidade`)."
    ),
    responses={
        200: ResponseSpec(
            data_container=ContatoEmpresa, generate_examples=False, description="The contacts"
        ),
        **ERRORS,
    },
    tags=["CNPJ"],
)
async def contacts(
    request: Request[Any, Any, Any], cnpj: FromPath[str], backends: NamedDependency[Backends]
) -> Response[bytes]:
    await meter(request, CONSULTAR_CONTATOS)
    return json_response(await contatos(backends, ConsultaCnpj(cnpj=cnpj)))
