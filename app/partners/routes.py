"""`GET /socios/{cnpj}` (alias `/v1/socios/{cnpj}`): the QSA and the companies it ties to; and
`/socios/relacionados`: the companies of a partner."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, get
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import FromPath

from app.context import Backends
from app.lib.operations import meter
from app.lib.responses import json_response
from app.lib.rest import query_route
from app.lookup.routes import ERRORS
from app.lookup.service import ConsultaCnpj
from app.partners.related import BUSCAR_SOCIOS_RELACIONADOS, BuscaSocios, Pagina, relacionados
from app.partners.service import CONSULTAR_SOCIOS, Quadro, quadro


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
    request: Request[Any, Any, Any], cnpj: FromPath[str], backends: NamedDependency[Backends]
) -> Response[bytes]:
    await meter(request, CONSULTAR_SOCIOS)
    return json_response(await quadro(backends, ConsultaCnpj(cnpj=cnpj)))


partner_companies = query_route(
    ["/socios/relacionados", "/v1/socios/relacionados"],
    name="partner_companies",
    operation=BUSCAR_SOCIOS_RELACIONADOS,
    input=BuscaSocios,
    output=Pagina,
    run=relacionados,
    summary="Companies of a partner",
    description=(
        "Companies with a partner matching `nome` (normalised: accents, case and suffixes do "
        "not matter), `doc` (a CPF, its 6 middle digits, Receita's `***NNNNNN**`, or a CNPJ) "
        "and/or `idade` (Receita's age band 0-9, with `nome`). Paged: `limit` (default 20, at "
        "most 100) and the opaque `next_cursor` of the previous page."
    ),
    tags=["Sócios"],
)
