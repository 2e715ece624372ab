"""`GET /v1/cnpj/validar/{cnpj}`: check digits of a CNPJ, numeric or alphanumeric.

Always 200: a malformed input is an answer (`valido: false` with the reason), not an error.
"""

from __future__ import annotations

import msgspec
from litestar import get
from litestar.params import FromPath

from app.auth.access import TOKEN_OPTIONAL, Access
from app.domain import cnpj

MAX_INPUT = 64


class Validacao(msgspec.Struct, kw_only=True):
    entrada: str
    cnpj: str
    """The input without punctuation, letters upper-cased."""
    valido: bool
    motivo: str | None
    """`vazio`, `tamanho`, `caracteres`, `primeiro_digito` or `segundo_digito`."""
    mensagem: str | None
    formatado: str | None
    alfanumerico: bool


def validate(raw: str) -> Validacao:
    checked = cnpj.check(raw[:MAX_INPUT]) if len(raw) <= MAX_INPUT else None
    if checked is None:
        return Validacao(
            entrada=raw[:MAX_INPUT], cnpj="", valido=False, motivo=cnpj.Problem.LENGTH.value,
            mensagem=cnpj.MESSAGES[cnpj.Problem.LENGTH], formatado=None, alfanumerico=False,
        )  # fmt: skip
    problem = checked.problem
    return Validacao(
        entrada=raw,
        cnpj=checked.cnpj,
        valido=problem is None,
        motivo=problem.value if problem else None,
        mensagem=cnpj.MESSAGES[problem] if problem else None,
        formatado=cnpj.format_cnpj(checked.cnpj) if problem is None else None,
        alfanumerico=problem is None and not checked.cnpj.isdigit(),
    )


@get(
    ["/v1/cnpj/validar/{cnpj:path}", "/cnpj/validar/{cnpj:path}"],
    summary="Validate a CNPJ",
    description=(
        "Checks length, characters and both check digits (numeric and alphanumeric CNPJs). "
        "Answers 200 with `valido` and, when not valid, the reason."
    ),
    opt={"access": Access.ANONYMOUS},
    security=TOKEN_OPTIONAL,
    tags=["CNPJ"],
)
async def validate_cnpj(cnpj: FromPath[str]) -> Validacao:
    return validate(cnpj.removeprefix("/"))
