"""Syntax checks of the phones and e-mails Receita publishes (not reachability)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from app.domain.record import Contato, ContatoArmazenado, Disponibilidade, Telefone, Validacao

DDDS = frozenset(
    "11 12 13 14 15 16 17 18 19 21 22 24 27 28 31 32 33 34 35 37 38 41 42 43 44 45 46 47 48 49 "
    "51 53 54 55 61 62 63 64 65 66 67 68 69 71 73 74 75 77 79 81 82 83 84 85 86 87 88 89 91 92 "
    "93 94 95 96 97 98 99".split()
)
"""Area codes (DDD) in use in Brazil."""

_EMAIL = re.compile(r"[a-z0-9._%+\-]+@[a-z0-9\-]+(\.[a-z0-9\-]+)*\.[a-z]{2,}")


def phone_problem(ddd: str | None, number: str) -> str | None:
    """Why a phone is not a plausible Brazilian number, or None."""
    if not ddd:
        return "sem DDD"
    if ddd.lstrip("0") not in DDDS:
        return "DDD inexistente"
    if not number.isdigit() or len(number) not in (8, 9):
        return "número deve ter 8 ou 9 algarismos"
    if len(number) == 9 and number[0] != "9":
        return "celular de 9 algarismos deve começar por 9"
    if len(set(number)) == 1:
        return "número repetido"
    return None


def email_problem(address: str) -> str | None:
    """Why an e-mail address is syntactically invalid, or None."""
    if _EMAIL.fullmatch(address.lower()) is None:
        return "endereço de e-mail malformado"
    return None


def checks(phones: Sequence[Telefone], emails: Sequence[str]) -> list[Validacao]:
    """The syntax check of each phone and e-mail, in that order."""
    found = [
        Validacao(
            tipo=phone.tipo,
            valor=f"{phone.ddd or ''}{phone.numero}",
            valido=(problem := phone_problem(phone.ddd, phone.numero)) is None,
            motivo=problem,
        )
        for phone in phones
    ]
    found.extend(
        Validacao(tipo="email", valor=address, valido=(problem := email_problem(address)) is None,
                  motivo=problem)
        for address in emails
    )  # fmt: skip
    return found


def availability(phones: Sequence[Telefone], emails: Sequence[str]) -> Disponibilidade:
    """Whether at least one phone (or fax) and one e-mail pass their checks."""
    return Disponibilidade(
        telefone=any(phone_problem(phone.ddd, phone.numero) is None for phone in phones),
        email=any(email_problem(address) is None for address in emails),
    )


def full_contact(stored: ContatoArmazenado) -> Contato:
    """The contacts as returned: the stored ones with their checks."""
    return Contato(
        telefones=stored.telefones,
        emails=stored.emails,
        origem=stored.origem,
        validacao=checks(stored.telefones, stored.emails),
        disponibilidade=stored.disponibilidade,
    )
