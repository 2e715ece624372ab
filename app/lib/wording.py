"""msgspec's validation messages in the words of the service's users (Portuguese), for the 400s of
every face: `Expected `str` of length <= 200 - at `$.q`` becomes `Valor inválido em q: no máximo
200 caracteres.`
A message of a shape not listed here is kept as msgspec wrote it."""

from __future__ import annotations

import re
from typing import NamedTuple

_TYPES = {
    "str": "um texto",
    "int": "um número inteiro",
    "float": "um número",
    "bool": "verdadeiro ou falso (true/false)",
    "object": "um objeto",
    "array": "uma lista",
    "null": "nulo",
    "date": "uma data (AAAA-MM-DD)",
    "datetime": "uma data e hora (ISO 8601, como 2026-01-31T12:00:00Z)",
    "time": "uma hora (HH:MM:SS)",
    "uuid": "um UUID",
    "decimal": "um número",
}
_BOUNDS = {">=": "no mínimo", "<=": "no máximo", ">": "maior que", "<": "menor que"}
_UNITS = {"str": "caracteres", "array": "itens", "object": "campos"}

_AT = re.compile(r" - at `\$\.?(?P<campo>[^`]*)`$")
_LENGTH = re.compile(r"Expected `(?P<tipo>\w+)` of length (?P<op>[<>]=?) (?P<n>\d+)")
_BOUND = re.compile(r"Expected `(?:int|float)` (?P<op>[<>]=?) (?P<n>[-\d.]+)")
_TYPE = re.compile(r"Expected `(?P<esperado>[^`]+)`, got `(?P<veio>[^`]+)`")
_PATTERN = re.compile(r"Expected `str` matching regex")
_ENUM = re.compile(r"Invalid enum value (?P<valor>.+)")
CONTROLS = r"\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069"
"""What free text never holds: C0 controls, DEL, and the bidirectional overrides and isolates
that make a text show in another order than it is stored (a label that reads backwards)."""
CONTROL = re.compile(f"[{CONTROLS}]")
"""One character free text never holds, for texts checked outside a msgspec field."""
CONTROL_REASON = (
    "não pode ter caracteres de controle (como NUL, quebras de linha ou marcas de direção do texto)"
)


END = r"(?![\s\S])"
"""The end of a field's pattern. Not `$`: msgspec searches the pattern, and `$` also matches
before a final newline, so `^[0-9]+$` takes "123" and a newline. A lookahead for no character
at all reads the same in Python and in the JSON Schema (ECMAScript) dialect of the
documents."""


def free_text(*, required: bool) -> str:
    """The pattern of free text: anything but `CONTROLS` (at least one character if
    `required`)."""
    return f"^[^{CONTROLS}]{'+' if required else '*'}{END}"


_FREE_TEXT = re.compile(
    re.escape("regex '^[^" + CONTROLS.replace("\\", "\\\\") + "]")
    + r"[*+]"
    + re.escape(END.replace("\\", "\\\\") + "'")
)
"""The pattern of free text, as msgspec quotes it (its backslashes doubled)."""
_NAMED = re.compile(
    r"Object (?P<kind>missing required|contains unknown) field `(?P<campo>[^`]*)`"
    r"(?: - at `\$\.?(?P<at>[^`]*)`)?"
)
_DATE = re.compile(r"Invalid RFC3339 encoded (?P<tipo>date|datetime|time)")


def _kind(names: str) -> str:
    said = [_TYPES.get(name.strip(), name.strip()) for name in names.split("|")]
    wanted = [name for name in said if name != "nulo"] or said
    return " ou ".join(dict.fromkeys(wanted))


def _number(text: str) -> str:
    return text.removesuffix(".0")


def _reason(text: str) -> str:
    if found := _LENGTH.fullmatch(text):
        n, unit = int(found["n"]), _UNITS.get(found["tipo"], "")
        if found["op"] == ">=" and n == 1:
            return "não pode ser vazio"
        return f"deve ter {_BOUNDS[found['op']]} {n} {unit}".strip()
    if found := _BOUND.fullmatch(text):
        return f"deve ser {_BOUNDS[found['op']]} {_number(found['n'])}"
    if found := _TYPE.fullmatch(text):
        return f"deve ser {_kind(found['esperado'])}"
    if _PATTERN.match(text):
        if _FREE_TEXT.search(text):  # free text's pattern (msgspec doubles its backslashes)
            return CONTROL_REASON
        return "formato inválido"
    if found := _ENUM.fullmatch(text):
        return f"{found['valor'][:80]} não é um dos valores aceitos"
    if found := _DATE.fullmatch(text):
        return {
            "date": "data inválida: use AAAA-MM-DD",
            "datetime": "data e hora inválidas: use ISO 8601 (2026-01-31T12:00:00Z)",
        }.get(found["tipo"], "hora inválida")
    if text == "Number out of range":  # a number past a float's range, as `1e400`
        return "número fora do intervalo representável"
    return text


class NamedField(NamedTuple):
    """A field msgspec names as missing or unknown, with the path of its object
    (`socios[0].nome`)."""

    campo: str
    desconhecido: bool


SHOWN = 64
"""Characters of a caller's field name said back (an unknown name can be kilobytes long)."""


def shown(name: str) -> str:
    """A field name as said back: cut past `SHOWN` characters."""
    return name if len(name) <= SHOWN else f"{name[:SHOWN]}…"


def named_field(text: str) -> NamedField | None:
    """The field a `msgspec.ValidationError`'s text says is missing or unknown, if it says so
    (its name cut to `SHOWN` characters)."""
    found = _NAMED.fullmatch(text)
    if found is None:
        return None
    campo = f"{found['at']}.{found['campo']}" if found["at"] else found["campo"]
    return NamedField(shown(campo), found["kind"] == "contains unknown")


def invalid(text: str) -> str:
    """A `msgspec.ValidationError`'s text as the sentence of a 400: `Valor inválido em q: no
    máximo 200 caracteres.`"""
    if named := named_field(text):
        said = "Campo desconhecido" if named.desconhecido else "Campo obrigatório ausente"
        return f"{said}: {named.campo}."
    at = _AT.search(text)
    reason = _reason(text[: at.start()] if at else text)
    return (
        f"Valor inválido em {shown(at['campo'])}: {reason}." if at else f"Valor inválido: {reason}."
    )
