"""Check digits of a CNPJ, numeric or alphanumeric.

Always an answer: a malformed input is `valido: false` with the reason, not an error.
"""

from __future__ import annotations

import msgspec

from app.domain import cnpj
from app.lib.operations import Operacao

VALIDAR_CNPJ = Operacao("validar_cnpj", None)


class Validacao(msgspec.Struct, kw_only=True):
    entrada: str
    cnpj: str
    """The input without punctuation, letters upper-cased."""
    valido: bool
    motivo: str | None
    """`vazio`, `tamanho`, `caracteres`, `zerado`, `primeiro_digito` or `segundo_digito`."""
    mensagem: str | None
    formatado: str | None
    alfanumerico: bool


def validate(raw: str) -> Validacao:
    checked = cnpj.check(raw)
    problem = checked.problem
    return Validacao(
        entrada=raw[: cnpj.MAX_INPUT],
        cnpj=checked.cnpj,
        valido=problem is None,
        motivo=problem.value if problem else None,
        mensagem=cnpj.MESSAGES[problem] if problem else None,
        formatado=cnpj.format_cnpj(checked.cnpj) if problem is None else None,
        alfanumerico=problem is None and not checked.cnpj.isdigit(),
    )
