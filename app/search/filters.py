"""Search filters: one Struct for the query string and the JSON body, checked field by field
and turned into Elasticsearch filter clauses.

Every value is bounded (lengths, ranges, list sizes), so no filter can make a query scan the
whole index in an unbounded way: codes are exact terms or short prefixes of keyword fields.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated, Any, NamedTuple

import msgspec

from app.domain import codes
from app.domain.text import TYPED_CODE, digits, is_code, normalize, trim
from app.errors import BadRequestError
from app.lib import body
from app.lib.paging import MAX_CURSOR
from app.lib.wording import CONTROL, CONTROL_REASON, free_text, invalid, named_field
from app.search.categories import categories, category_clause

DEFAULT_LIMIT = 20
MAX_LIMIT = 100
MAX_TEXT = 200
MAX_LIST_TEXT = 400
"""Characters of a comma-separated list filter: several times the longest full list (every UF
and `EX`, 83 characters; every tax regime by its longest name, 71)."""
FACETS = {
    "uf": "endereco.uf",
    "cnae": "cnae_principal.grupo.divisao",
    "municipio": "endereco.municipio.codigo",
    "situacao": "situacao_cadastral.codigo",
}
"""Facet name -> the keyword field counted."""

_SITUACOES = {
    **{code: code for code in codes.SITUACAO_CADASTRAL},
    **{code.lstrip("0"): code for code in codes.SITUACAO_CADASTRAL},
    **{normalize(label): code for code, label in codes.SITUACAO_CADASTRAL.items()},
    "ativo": "02",
    "suspenso": "03",
    "inapto": "04",
    "baixado": "08",
}
_PORTES = {
    **{code: code for code in codes.PORTE},
    "me": "01",
    "micro": "01",
    "microempresa": "01",
    "epp": "03",
    "pequeno": "03",
    "demais": "05",
    "nao informado": "00",
}
_REGIMES = {
    **{key: key for key in codes.REGIMES},
    **{key.replace("_", " "): key for key in codes.REGIMES},
    "real": "lucro_real",
    "presumido": "lucro_presumido",
    "arbitrado": "lucro_arbitrado",
    "imune do irpj": "imune",
    "isenta do irpj": "isenta",
}
_EMAIL = re.compile(r"[^@\s]{1,64}@[^@\s]{1,255}")


# Strings are bounded in the type: checked when the filters are decoded, before any
# normalisation, so a long value costs nothing.
# `extra_json_schema` is documentation only (the OpenAPI document, the agents' schemas): what a
# client should send, narrower than what the checks below accept (names for UFs, punctuation
# in codes...), which refuse the rest with a 400 naming the field and what it takes.
Texto = Annotated[str, msgspec.Meta(max_length=MAX_TEXT)]


def list_pattern(values: list[str]) -> str:
    """The pattern of a comma-separated list of `values`."""
    one = f"({'|'.join(values)})"
    return f"^{one}(,{one})*$"


def documented(max_length: int, pattern: str) -> msgspec.Meta:
    """A string's bound, and its pattern for the document only (see above)."""
    return msgspec.Meta(max_length=max_length, extra_json_schema={"pattern": pattern})


Nome = Annotated[str, documented(MAX_TEXT, "[0-9A-Za-z]")]
"""A name or free text to search: at least one letter or digit."""
Lista = Annotated[str, msgspec.Meta(max_length=MAX_LIST_TEXT)]
UF_LIST = list_pattern(codes.ADDRESS_UFS)
Ufs = Annotated[str, documented(MAX_LIST_TEXT, UF_LIST)]
_SITUACAO_NAMES = ["ativa", "baixada", "suspensa", "inapta", "nula", *codes.SITUACAO_CADASTRAL]
Situacoes = Annotated[str, documented(MAX_LIST_TEXT, list_pattern(_SITUACAO_NAMES))]
Portes = Annotated[
    str, documented(MAX_LIST_TEXT, list_pattern(["me", "epp", "demais", *codes.PORTE]))
]
CNAE_DIGITS = "([0-9]{2,5}|[0-9]{7})"
"""A CNAE code as the document shows it (2 to 5 or 7 digits)."""
Cnae = Annotated[str, documented(16, f"^{CNAE_DIGITS}$")]
Cep = Annotated[str, documented(16, "^[0-9]{1,8}$")]
Ddd = Annotated[str, documented(8, "^[0-9]{2}$")]
Natureza = Annotated[str, documented(8, "^[0-9]{4}$")]
Curto = Annotated[str, msgspec.Meta(max_length=8)]
Slug = Annotated[str, msgspec.Meta(max_length=64)]
CategoriaSlug = Annotated[
    str, msgspec.Meta(max_length=64, extra_json_schema={"enum": sorted(categories())})
]
_FACET = f"({'|'.join(FACETS)})"
Facetas = Annotated[str, documented(64, f"^{_FACET}(,{_FACET})*$")]
Telefone = Annotated[str, documented(32, "^([0-9]{2})?[0-9]{8,9}$")]
Email = Annotated[str, documented(320, f"^{_EMAIL.pattern}$")]
Cidade = Annotated[
    str,
    msgspec.Meta(
        max_length=100,
        pattern=free_text(required=False),
        description=(
            "Município: nome completo (acentos opcionais), código da Receita (4) ou IBGE (7)."
        ),
        examples=["Curitiba", "4106902"],
    ),
]
"""A city as the agent's tools, the leads and `/seek` take it, described for their schemas
(a name needs a letter or a digit: `_municipio_clause` checks it)."""
Municipio = Cidade
Cursor = Annotated[str, msgspec.Meta(max_length=MAX_CURSOR)]
RegimeFiltro = Annotated[
    str,
    msgspec.Meta(
        max_length=MAX_LIST_TEXT,
        description=(
            "Regime tributário do ano mais recente na Receita: lucro_real, lucro_presumido, "
            "lucro_arbitrado, imune, isenta (vários separados por vírgula: qualquer um deles)."
        ),
        examples=["lucro_presumido"],
        extra_json_schema={"pattern": list_pattern(list(codes.REGIMES))},
    ),
]
Capital = Annotated[float, msgspec.Meta(ge=0, lt=1e15)]
Limite = Annotated[int, msgspec.Meta(ge=1, le=MAX_LIMIT)]


class Filtros(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    """Filters shared by `/search`, `/seek` and `/nome` (each takes the ones it documents)."""

    q: Nome | None = None
    """Free text over legal name, trade name and partner names (`/search`)."""
    nome: Nome | None = None
    """Legal or trade name (`/seek`, `/nome`)."""
    uf: Ufs | None = None
    cnae: Cnae | None = None
    categoria: CategoriaSlug | None = None
    """A category slug of `/seek/cidades` (`fixtures/reference/categorias-cnae.json`)."""
    cnae_secundario: bool | None = None
    telefone: Telefone | None = None
    email: Email | None = None
    municipio: Municipio | None = None
    cep: Cep | None = None
    ddd: Ddd | None = None
    capital_min: Capital | None = None
    capital_max: Capital | None = None
    abertura_de: dt.date | None = None
    abertura_ate: dt.date | None = None
    porte: Portes | None = None
    natureza: Natureza | None = None
    situacao: Situacoes | None = None
    matriz: bool | None = None
    simples: bool | None = None
    mei: bool | None = None
    regime_tributario: RegimeFiltro | None = None
    """The newest year's tax regime: lucro_real, lucro_presumido, lucro_arbitrado, imune,
    isenta (comma-separated: any of them)."""
    com_email: bool | None = None
    com_telefone: bool | None = None
    limit: Limite = DEFAULT_LIMIT
    cursor: Cursor | None = None
    facets: Facetas | None = None
    """Comma-separated facet names: uf, cnae, municipio, situacao (first page only)."""


FIELDS = tuple(Filtros.__struct_fields__)


def bad(field: str, message: str, value: Any = None) -> BadRequestError:
    shown = value[:64] if isinstance(value, str) else value
    return BadRequestError(message, details={"campo": field, "valor": shown})


Estado = Annotated[
    str,
    msgspec.Meta(
        max_length=8,
        description="Sigla de um dos 27 estados, em qualquer caixa.",
        extra_json_schema={"enum": codes.UFS},  # documented only: `estado` reads any case
    ),
]
"""One federative unit (not `EX`), as a field of a service's input."""


def estado(raw: str | None, field: str = "uf") -> str | None:
    """The sigla of one of the 27 states in any case and spacing (` sp `) as `SP`; a 400
    naming `field` for anything else."""
    if raw is None:
        return None
    sigla = trim(raw).upper()
    if len(raw) > 8 or sigla not in codes.UFS:
        raise bad(field, f"{field}: sigla de um dos 27 estados (SP, RJ...).", raw)
    return sigla


def from_query(params: dict[str, str]) -> Filtros:
    """Filters from query-string values (strings converted to each field's type)."""
    filters = _convert(dict(params), strict=False)
    body.refuse_nulls(params, filters)
    return filters


def from_body(raw: bytes, accepted: tuple[str, ...] = FIELDS) -> Filtros:
    """Filters from a JSON body; unknown fields and wrong types are 400s naming the field (and,
    for an unknown one, the `accepted` fields of the route)."""
    data = body.decode(raw) if raw.strip() else {}
    if not isinstance(data, dict):
        raise BadRequestError("O corpo deve ser um objeto JSON com os filtros.")
    return _convert(data, strict=True, accepted=accepted)


def _convert(data: dict[str, Any], strict: bool, accepted: tuple[str, ...] = FIELDS) -> Filtros:
    try:
        return msgspec.convert(data, Filtros, strict=strict)
    except msgspec.ValidationError as error:
        text = str(error)
        named = named_field(text)
        if named and named.desconhecido:
            raise BadRequestError(
                f"Filtro desconhecido: {named.campo}.",
                details={"campo": named.campo, "aceitos": accepted},
            ) from error
        raise BadRequestError(invalid(text), details={"campo": body.field_of(error)}) from error


def list_items(field: str, raw: str) -> list[str]:
    """The items of a comma-separated list, without the plain spaces around them; a 400 naming
    `field` for an empty item (`SP,`, `SP,,RJ`: a value lost in the making of the list, not
    one to guess) or one spaced by a tab or another kind of space."""
    items = [trim(item) for item in raw.split(",")]
    if raw.strip(" ") and not all(items):
        raise bad(field, f"{field}: item vazio na lista; separe os valores por uma vírgula.", raw)
    if any(item != item.strip() for item in items):
        raise bad(field, f"{field}: só espaços comuns em volta dos valores.", raw)
    return [item for item in items if item]


def _codes(field: str, raw: str, table: dict[str, str]) -> list[str]:
    """The codes of a comma-separated list of names or codes of `table` (at most as many
    values as it has codes); a 400 naming `field` for an empty list or item, or an unknown
    value."""
    if CONTROL.search(raw):  # "ativa\x00" would read as ativa, and be kept as given
        raise bad(field, f"{field}: {CONTROL_REASON}.", raw)
    values = list_items(field, raw)
    most = len(set(table.values()))
    if not values or len(values) > most:
        raise bad(field, f"{field}: informe de 1 a {most} valores separados por vírgula.", raw)
    found = []
    for value in values:
        code = table.get(normalize(value)) or table.get(value)
        if code is None:
            raise bad(field, f"{field}: valor desconhecido {value[:32]!r}.", raw)
        found.append(code)
    return sorted(set(found))


_UF_TABLE = {uf.lower(): uf for uf in codes.ADDRESS_UFS}


def _ufs(raw: str) -> list[str]:
    return _codes("uf", raw, _UF_TABLE)


_CEP = re.compile(r" *[0-9][0-9.\- ]*")
"""A CEP or its first digits as people write them (`80010-000`, `80.010`): a letter is refused,
not dropped (`5353484O`, a letter O for a zero, would search another CEP)."""
_NATUREZA = re.compile(r"[0-9]{3}[-.]?[0-9]")
"""A legal nature's code, as Receita prints it (`206-2`) or bare (`2062`)."""


def cnae_clause(raw: str, secondary: bool, field: str = "cnae") -> dict[str, Any]:
    """The filter of a CNAE code of 2 to 7 digits on the primary activity (or any activity
    with `secondary`); a 400 naming `field` for anything else."""
    code = digits(raw)
    if len(code) not in (2, 3, 4, 5, 7) or not TYPED_CODE.fullmatch(raw):
        message = f"{field}: código de 2 (divisão), 3 (grupo), 4-5 (classe) ou 7 dígitos."
        raise bad(field, message, raw)
    if secondary:
        return (
            {"term": {"busca.cnaes": code}} if len(code) == 7 else {"prefix": {"busca.cnaes": code}}
        )
    level = {
        2: "cnae_principal.grupo.divisao",
        3: "cnae_principal.grupo.grupo",
        5: "cnae_principal.grupo.classe",
        7: "cnae_principal.codigo",
    }.get(len(code))
    if level is None:  # 4 digits: a class without its check digit
        return {"prefix": {"cnae_principal.grupo.classe": code}}
    return {"term": {level: code}}


_PHONE_PUNCTUATION = frozenset(" ()-.")
"""What people write around a phone's digits: `(11) 3041-6395`."""


def _phone_clause(raw: str) -> dict[str, Any]:
    number = digits(raw)
    stray = any(not ("0" <= char <= "9" or char in _PHONE_PUNCTUATION) for char in raw)
    if stray or len(number) not in (8, 9, 10, 11) or len(raw) > 32:
        raise bad("telefone", "telefone: 8 ou 9 dígitos, com ou sem o DDD na frente.", raw)
    if len(number) >= 10:
        return {
            "bool": {
                "filter": [
                    {"term": {"contato.telefones.ddd": number[:2]}},
                    {"term": {"contato.telefones.numero": number[2:]}},
                ]
            }
        }
    return {"term": {"contato.telefones.numero": number}}


def _municipio_clause(raw: str) -> dict[str, Any]:
    value = raw.strip()
    if is_code(value) and len(value) in (4, 7):
        field = "endereco.municipio.codigo" if len(value) == 4 else "endereco.municipio.codigo_ibge"
        return {"term": {field: value}}
    words = normalize(value)
    if not words or len(value) > 100 or value.isdigit():  # digits, but not a code
        raise bad("municipio", "municipio: nome, código da Receita (4) ou do IBGE (7).", raw)
    return {"term": {"busca.municipio.exato": words}}  # the whole name, not a word of it


def _range(field: str, low: Any, high: Any, name: str) -> dict[str, Any] | None:
    if low is None and high is None:
        return None
    if low is not None and high is not None and low > high:
        raise bad(name, f"{name}: o mínimo é maior que o máximo.", f"{low} > {high}")
    bounds: dict[str, Any] = {}
    if low is not None:
        bounds["gte"] = low.isoformat() if isinstance(low, dt.date) else low
    if high is not None:
        bounds["lte"] = high.isoformat() if isinstance(high, dt.date) else high
    return {"range": {field: bounds}}


def check_common(filters: Filtros) -> None:
    """Checks that do not depend on the route (lengths and bounds are in the type): facet
    names."""
    facet_names(filters)


def facet_names(filters: Filtros) -> list[str]:
    if filters.facets is None:
        return []
    names = sorted(set(list_items("facets", filters.facets)))
    unknown = [name for name in names if name not in FACETS]
    if unknown or not names:
        raise bad("facets", f"facets: use {', '.join(FACETS)}.", filters.facets)
    return names


class Aplicados(NamedTuple):
    """What a search applies of its filters."""

    clauses: list[dict[str, Any]]
    """The Elasticsearch filter clauses of every structured filter that is set."""
    understood: dict[str, Any]
    """The set filters as the clauses read them (codes for names, digits for punctuated codes,
    the compared form of a city's name and of an e-mail), for the answer to echo what was
    applied rather than what was typed; the others as given."""


def clauses(filters: Filtros) -> list[dict[str, Any]]:
    """The filter clauses of every structured filter that is set."""
    return applied(filters).clauses


def applied(filters: Filtros) -> Aplicados:
    """The clauses of the set filters and the values they apply; a 400 naming the field for a
    bad value."""
    found: list[dict[str, Any]] = []
    seen: dict[str, Any] = msgspec.to_builtins(filters)
    if filters.uf is not None:
        seen["uf"] = _ufs(filters.uf)
        found.append({"terms": {"endereco.uf": seen["uf"]}})
    if filters.cnae is not None:
        found.append(cnae_clause(filters.cnae, bool(filters.cnae_secundario)))
        seen["cnae"] = digits(filters.cnae)
    if filters.categoria is not None:
        found.append(category_clause(filters.categoria))
    if filters.telefone is not None:
        found.append(_phone_clause(filters.telefone))
        seen["telefone"] = digits(filters.telefone)
    if filters.email is not None:
        email = filters.email.strip()
        if not _EMAIL.fullmatch(email):
            raise bad("email", "email: endereço completo (nome@dominio).", filters.email)
        seen["email"] = email.lower()
        found.append({"term": {"contato.emails": seen["email"]}})
    if filters.municipio is not None:
        found.append(_municipio_clause(filters.municipio))
        value = filters.municipio.strip()
        seen["municipio"] = value if is_code(value) else normalize(value)
    if filters.cep is not None:
        cep = digits(filters.cep)
        if not 1 <= len(cep) <= 8 or len(filters.cep) > 16 or not _CEP.fullmatch(filters.cep):
            message = "cep: 8 dígitos, ou os primeiros para buscar pelo prefixo."
            raise bad("cep", message, filters.cep)
        found.append({"term" if len(cep) == 8 else "prefix": {"endereco.cep": cep}})
        seen["cep"] = cep
    if filters.ddd is not None:
        if not (len(filters.ddd) == 2 and is_code(filters.ddd)):
            raise bad("ddd", "ddd: 2 dígitos.", filters.ddd)
        found.append({"term": {"contato.telefones.ddd": filters.ddd}})
    capital = _range("capital_social", filters.capital_min, filters.capital_max, "capital_min")
    opened = _range("abertura", filters.abertura_de, filters.abertura_ate, "abertura_de")
    found.extend(clause for clause in (capital, opened) if clause)
    if filters.porte is not None:
        seen["porte"] = _codes("porte", filters.porte, _PORTES)
        found.append({"terms": {"porte.codigo": seen["porte"]}})
    if filters.natureza is not None:
        nature = digits(filters.natureza)
        if len(nature) != 4 or not _NATUREZA.fullmatch(filters.natureza.strip()):
            message = "natureza: código de 4 dígitos (2062, 2135...)."
            raise bad("natureza", message, filters.natureza)
        found.append({"term": {"natureza_juridica.codigo": nature}})
        seen["natureza"] = nature
    if filters.situacao is not None:
        seen["situacao"] = _codes("situacao", filters.situacao, _SITUACOES)
        found.append({"terms": {"situacao_cadastral.codigo": seen["situacao"]}})
    if filters.matriz is not None:
        found.append({"term": {"matriz_filial.codigo": "1" if filters.matriz else "2"}})
    if filters.regime_tributario is not None:
        seen["regime_tributario"] = _codes("regime_tributario", filters.regime_tributario, _REGIMES)
        found.append({"terms": {"busca.regimes": seen["regime_tributario"]}})
    for name, field in (
        ("simples", "simples.optante"),
        ("mei", "mei.optante"),
        ("com_email", "contato.disponibilidade.email"),
        ("com_telefone", "contato.disponibilidade.telefone"),
    ):
        value = getattr(filters, name)
        if value is True:
            found.append({"term": {field: True}})
        elif value is False:  # companies without the record count as "not"
            found.append({"bool": {"must_not": {"term": {field: True}}}})
    return Aplicados(found, seen)
