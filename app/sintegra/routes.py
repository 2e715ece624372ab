"""`GET /v1/sintegra/{cnpj}` (alias `/sintegra/{cnpj}`): state registrations of a CNPJ."""

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
from app.lookup.routes import ERRORS
from app.sintegra.service import CONSULTAR_SINTEGRA, ConsultaSintegra, Sintegra, inscricoes


@get(
    ["/v1/sintegra/{cnpj:path}", "/sintegra/{cnpj:path}"],
    summary="State registrations (Sintegra) of a CNPJ",
    description=(
        "Inscrições estaduais of the establishment, one per UF where it is registered: number "
        "(digits and as the state prints it), kind, situação, whether it is habilitada, dates "
        "and tax regime. Every number was checked against its state's check-digit rule when it "
        "was loaded. `uf` keeps one state. 404 when there is none."
    ),
    responses={
        200: ResponseSpec(
            data_container=Sintegra, generate_examples=False, description="The registrations"
        ),
        **ERRORS,
    },
    tags=["CNPJ"],
    opt={"query": ("uf",), "query_struct": ConsultaSintegra},
)
async def state_registrations(
    request: Request[Any, Any, Any],
    cnpj: FromPath[str],
    backends: NamedDependency[Backends],
) -> Response[bytes]:
    await meter(request, CONSULTAR_SINTEGRA)
    params = {**single_values(request.query_params.dict()), "cnpj": cnpj}
    return json_response(await inscricoes(backends, convert(params, ConsultaSintegra)))
