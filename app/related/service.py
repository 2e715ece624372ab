"""Companies related to a value or to another company: sharing a partner, a phone, an e-mail
or an address (CEP and number), each with what it shares.

`value` is either the value itself (a partner's name, a phone, an e-mail, `CEP número`) or a
CNPJ, whose own partners, phones, e-mails or address are then looked for in other companies
(its own company, the same CNPJ root, left out)."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

import msgspec

from app.context import Backends
from app.domain import cnpj
from app.domain.summary import Fonte, Resumo, resumo
from app.domain.text import digits, has_phrase, normalize_name, partner_key
from app.errors import BadRequestError
from app.lib import paging
from app.lib.listing import Listing, fetch
from app.lib.operations import Custo, Operacao
from app.lib.wording import free_text
from app.lookup.service import ConsultaCnpj, cnpj_refusal, consultar

ENCONTRAR_RELACIONADAS = Operacao("encontrar_empresas_relacionadas", Custo.BUSCA)
Tipo = Literal["socio", "telefone", "email", "endereco"]
_EMAIL = re.compile(r"[^@\s]{1,64}@[^@\s]{1,255}")
_NO_NUMBER = {"", "SN", "S/N", "S N", "SEM NUMERO", "0"}
_FIELDS: dict[str, tuple[str, ...]] = {
    "socio": ("socios", "busca.socios_chaves"),
    "telefone": ("contato.telefones",),
    "email": ("contato.emails",),
    "endereco": ("endereco.numero",),
}
_LISTINGS = {
    tipo: Listing(lista=f"relacionadas-{tipo}", sort=[{"cnpj": "asc"}], after=tuple[str],
                  fields=fields)
    for tipo, fields in _FIELDS.items()
}  # fmt: skip


class BuscaRelacionadas(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Empresas que compartilham um sócio, telefone, e-mail ou endereço."""

    kind: Annotated[
        Tipo,
        msgspec.Meta(
            description=(
                "O que as empresas compartilham: socio (sócio), telefone, email ou endereco "
                "(CEP e número)."
            )
        ),
    ]
    value: Annotated[
        str,
        msgspec.Meta(
            min_length=1,
            max_length=200,
            pattern=free_text(required=True),
            description=(
                "O valor (nome do sócio; telefone com DDD; e-mail; 'CEP número') ou um CNPJ, "
                "cujos sócios, telefones, e-mails ou endereço são procurados em outras empresas."
            ),
            examples=["33683111000280", "(61) 2021-9000", "contato@empresa.com.br", "70836900 1"],
        ),
    ]
    limit: Annotated[int, msgspec.Meta(ge=1, le=100, description="Itens por página.")] = 20
    cursor: paging.CursorTexto | None = None


class EmpresaRelacionada(Resumo, kw_only=True):
    em_comum: list[str]
    """What the company shares: the partners' names, the phone, the e-mail or the address."""


class Relacionadas(msgspec.Struct, kw_only=True):
    kind: str
    origem: str | None
    """The CNPJ whose values were looked for, when `valor` was a CNPJ."""
    procurados: list[str]
    """The values looked for (partners' names, phones, e-mails, `CEP número`)."""
    data: list[EmpresaRelacionada]
    total: int
    next_cursor: str | None


class _Alvo(msgspec.Struct, kw_only=True):
    """What to look for: labels by the key the index holds, and the filter clause."""

    labels: dict[str, str]
    clause: dict[str, Any] | None
    own_root: str | None = None


def _phone_key(ddd: str | None, numero: str) -> str:
    return f"{ddd or ''}{numero}"


def phone_label(ddd: str | None, numero: str) -> str:
    """A phone as `em_comum` shows it: `(41) 33334444`, or the number alone without a DDD."""
    return f"({ddd}) {numero}" if ddd else numero


def _phones_clause(pairs: list[tuple[str | None, str]]) -> dict[str, Any]:
    should = []
    for ddd, numero in pairs:
        terms = [{"term": {"contato.telefones.numero": numero}}]
        if ddd:
            terms.append({"term": {"contato.telefones.ddd": ddd}})
        should.append({"bool": {"filter": terms}})
    return {"bool": {"should": should, "minimum_should_match": 1}}


def _address_clause(cep: str, numero: str) -> dict[str, Any]:
    return {
        "bool": {"filter": [{"term": {"endereco.cep": cep}}, {"term": {"endereco.numero": numero}}]}
    }


def _from_value(tipo: str, valor: str) -> _Alvo:
    text = valor.strip()
    if tipo == "socio":
        name = normalize_name(text)
        if not name:
            raise BadRequestError("value: nome do sócio sem letras.", {"campo": "value"})
        return _Alvo(labels={name: text}, clause={"match_phrase": {"busca.socios": name}})
    if tipo == "telefone":
        number = digits(text)
        if len(number) not in (8, 9, 10, 11):
            raise BadRequestError(
                "value: telefone de 8 ou 9 dígitos, com ou sem o DDD.", {"campo": "value"}
            )
        ddd, rest = (number[:2], number[2:]) if len(number) >= 10 else (None, number)
        return _Alvo(labels={_phone_key(ddd, rest): text}, clause=_phones_clause([(ddd, rest)]))
    if tipo == "email":
        if not _EMAIL.fullmatch(text):
            raise BadRequestError("value: e-mail completo (nome@dominio).", {"campo": "value"})
        email = text.lower()
        return _Alvo(labels={email: email}, clause={"terms": {"contato.emails": [email]}})
    parts = re.findall(r"[0-9A-Za-z][0-9A-Za-z/]*", text.replace("-", ""))  # not a lone "/"
    if len(parts) < 2 or not (parts[0].isdigit() and len(parts[0]) == 8):
        raise BadRequestError(
            "value: endereço como 'CEP número' (70836900 1), ou um CNPJ.", {"campo": "value"}
        )
    cep, numero = parts[0], " ".join(parts[1:]).upper()
    return _Alvo(labels={f"{cep} {numero}": f"{cep} {numero}"}, clause=_address_clause(cep, numero))


async def _from_company(backends: Backends, tipo: str, number: str) -> _Alvo:
    company = await consultar(backends, ConsultaCnpj(cnpj=number))
    root = company.cnpj_basico
    if tipo == "socio":
        labels = {partner_key(s.nome, s.documento): s.nome for s in company.socios}
        clause = {"terms": {"busca.socios_chaves": list(labels)}} if labels else None
    elif tipo == "telefone":
        pairs = [(t.ddd, t.numero) for t in company.contato.telefones]
        labels = {_phone_key(ddd, numero): phone_label(ddd, numero) for ddd, numero in pairs}
        clause = _phones_clause(pairs) if pairs else None
    elif tipo == "email":
        labels = {email.lower(): email.lower() for email in company.contato.emails}
        clause = {"terms": {"contato.emails": list(labels)}} if labels else None
    else:
        cep, numero = company.endereco.cep, (company.endereco.numero or "").strip().upper()
        if not cep or numero in _NO_NUMBER:
            labels, clause = {}, None
        else:
            labels = {f"{cep} {numero}": f"{cep} {numero}"}
            clause = _address_clause(cep, numero)
    return _Alvo(labels=labels, clause=clause, own_root=root)


def _shared(tipo: str, source: Fonte, alvo: _Alvo) -> list[str]:
    """What `source` has of the values looked for."""
    if tipo == "socio":
        keys = source.busca.socios_chaves if source.busca else []
        shared = [alvo.labels[key] for key in keys if key in alvo.labels]
        phrases = [label for label in alvo.labels if "|" not in label]  # a name, as typed
        shared += [
            s.nome for s in source.socios
            if any(has_phrase(normalize_name(s.nome), phrase) for phrase in phrases)
        ]  # fmt: skip
        return list(dict.fromkeys(shared))
    if tipo == "telefone":
        phones = source.contato.telefones if source.contato else []
        keys = [_phone_key(t.ddd, t.numero) for t in phones]
        shared = [alvo.labels[key] for key in keys if key in alvo.labels]
        loose = [k for k in alvo.labels if len(k) <= 9]  # a number given without its DDD
        shared += [alvo.labels[k] for k in loose if any(t.numero == k for t in phones)]
        return list(dict.fromkeys(shared))  # a number without DDD matches both ways
    if tipo == "email":
        emails = source.contato.emails if source.contato else []
        return [alvo.labels[e.lower()] for e in emails if e.lower() in alvo.labels]
    address = source.endereco
    key = f"{address.cep} {(address.numero or '').strip().upper()}" if address else ""
    return [alvo.labels[key]] if key in alvo.labels else []


_CHECK_DIGITS = (cnpj.Problem.ZEROS, cnpj.Problem.FIRST_DIGIT, cnpj.Problem.SECOND_DIGIT)


def _meant_as_cnpj(kind: str, value: str, number: cnpj.Check) -> bool:
    """Whether an invalid `value` is a CNPJ gone wrong rather than a value of `kind`: a CNPJ's
    shape with a wrong check digit (no phone, e-mail or address has it), or, for a partner,
    a dozen digits or more without a letter (no name is that)."""
    if number.problem in _CHECK_DIGITS:
        return True
    no_letter = not any(char.isalpha() for char in value)
    return kind == "socio" and no_letter and sum(char.isdigit() for char in value) >= 12


async def relacionadas(backends: Backends, entrada: BuscaRelacionadas) -> Relacionadas:
    """One page of the companies sharing the value (or the CNPJ's values), by CNPJ."""
    number = cnpj.check(entrada.value)
    if number.valid:
        alvo = await _from_company(backends, entrada.kind, number.cnpj)
    elif number.problem is not None and _meant_as_cnpj(entrada.kind, entrada.value, number):
        refusal = cnpj_refusal(entrada.value, number.problem)  # as every CNPJ argument gets it
        refusal.details = {"campo": "value", **refusal.details}
        raise refusal
    else:
        alvo = _from_value(entrada.kind, entrada.value)
    if alvo.clause is None:
        if entrada.cursor:  # no page of nothing has a next one: the cursor is another's
            raise paging.invalid_cursor(entrada.cursor)
        return Relacionadas(
            kind=entrada.kind, origem=number.cnpj, procurados=[], data=[], total=0,
            next_cursor=None,
        )  # fmt: skip
    query: dict[str, Any] = {"bool": {"filter": [alvo.clause]}}
    if alvo.own_root:
        query["bool"]["must_not"] = [{"term": {"cnpj_basico": alvo.own_root}}]
    page = await fetch(
        backends,
        _LISTINGS[entrada.kind],
        query,
        limit=entrada.limit,
        cursor=entrada.cursor,
        request_digest=paging.digest([entrada.kind, query]),  # the value as searched
    )
    return Relacionadas(
        kind=entrada.kind,
        origem=number.cnpj if number.valid else None,
        procurados=sorted(set(alvo.labels.values())),
        data=[
            EmpresaRelacionada(
                **resumo(hit.source), em_comum=_shared(entrada.kind, hit.source, alvo)
            )
            for hit in page.hits
        ],
        total=page.total,
        next_cursor=page.next_cursor,
    )
