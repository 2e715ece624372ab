"""`GET /v1/cnpj/validar/{cnpj}`: check digits of a CNPJ, numeric or alphanumeric."""

from __future__ import annotations

from typing import Any

from litestar import Request, get
from litestar.params import FromPath

from app.auth.access import TOKEN_OPTIONAL, Access
from app.lib.operations import meter
from app.validation.service import VALIDAR_CNPJ, Validacao, validate


@get(
    ["/v1/cnpj/validar/{cnpj:path}", "/cnpj/validar/{cnpj:path}"],
    summary="Validate a CNPJ",
    description=(
        "Checks length, characters and both check digits (numeric and alphanumeric CNPJs). "
        "Answers 200 with `valido` and, when not valid, the reason."
    ),
    opt={"access": Access.ANONYMOUS, "cnpj": "any"},
    security=TOKEN_OPTIONAL,
    tags=["CNPJ"],
)
async def validate_cnpj(request: Request[Any, Any, Any], cnpj: FromPath[str]) -> Validacao:
    await meter(request, VALIDAR_CNPJ)
    return validate(cnpj.removeprefix("/"))
