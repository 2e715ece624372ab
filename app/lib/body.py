"""Request bodies: one JSON reader for every route, so a malformed body is always a 400.

msgspec raises more than `DecodeError` on hostile input: invalid UTF-8 inside a string raises
`UnicodeDecodeError`, and deep nesting (`[[[[...`) raises `RecursionError`. Both are the caller's
fault, so both are 400s here. `SafeRequest` makes Litestar's own body parsing (routes that
declare `data: JSONBody[...]`) go through the same reader. Sizes are capped before any of this
(`Settings.max_body_size`, Litestar's `request_max_body_size`: 413).
"""

from __future__ import annotations

import re
from typing import Any, TypeVar

import msgspec
from litestar import Request
from litestar.types import Empty

from app.errors import BadRequestError, UnsupportedMediaError
from app.lib.wording import invalid, named_field, shown

T = TypeVar("T")
MAX_DEPTH_MESSAGE = "Corpo JSON aninhado demais."


def _is_json(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (
        media.startswith("application/") and media.endswith("+json")
    )


async def json_bytes(request: Request[Any, Any, Any]) -> bytes:
    """The request's body, refused with a 415 when it is declared as anything but JSON (a form,
    plain text); a body without `Content-Type` is read as JSON."""
    raw = await request.body()
    declared = request.headers.get("content-type")
    if raw and declared is not None and not _is_json(declared):
        raise UnsupportedMediaError(
            "Content-Type deve ser application/json.",
            details={"content_type": declared[:100]},
        )
    return raw


_SYNTAX = {
    "Input data was truncated": "o JSON termina antes do fim (corpo vazio ou cortado)",
    "trailing characters": "há texto depois do fim do JSON",
    "invalid character": "caractere inesperado (NaN, Infinity, BOM e aspas simples não são JSON)",
    "expected ':'": "falta ':' depois do nome de um campo",
    "trailing comma in array": "vírgula sobrando no fim de uma lista",
    "trailing comma in object": "vírgula sobrando no fim de um objeto",
    "invalid escape character in string": "escape inválido num texto",
    "Number out of range": "número fora do intervalo representável",
    "invalid utf-16 surrogate pair": "par de escapes \\u UTF-16 inválido num texto",
    "object keys must be strings": "o nome de cada campo deve ser um texto entre aspas",
    "invalid number": "número inválido (sem zeros à esquerda; dígitos antes e depois do ponto)",
    "invalid character in unicode escape": "escape \\u inválido num texto (4 hexadecimais)",
}
_BYTE = re.compile(r"\(byte (\d+)\)")
_LONE_HIGH = re.compile(
    rb"(?<!\\)(?:\\\\)*\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
)
"""A `\\uD800`-`\\uDBFF` escape (after an even run of backslashes, so not the text `\\\\u...`)
without the low half after it: msgspec reads on for that half and says the input was
truncated."""


def _syntax(text: str) -> str:
    """msgspec's reason for bytes that are not JSON in the users' words, with its position."""
    reason = text.removeprefix("JSON is malformed: ").split(" - at ", 1)[0]
    at = _BYTE.search(reason)
    bare = _BYTE.sub("", reason).strip()
    said = _SYNTAX.get(bare) or (
        "esperado " + bare.removeprefix("expected ").replace(" or ", " ou ")
        if bare.startswith("expected ")
        else bare
    )
    return f"{said} (byte {at[1]})." if at else f"{said}."


def decode(raw: bytes) -> Any:
    """Any JSON value; 400 for bytes that are not JSON (bad syntax, bad UTF-8, too deep)."""
    if not raw.strip():
        raise BadRequestError("Corpo ausente: envie um JSON.")
    try:
        return msgspec.json.decode(raw)
    except msgspec.DecodeError as error:
        if str(error) == "Input data was truncated" and _LONE_HIGH.search(raw):
            raise BadRequestError(
                "Corpo JSON inválido: um escape \\uD800-\\uDBFF sem o par UTF-16 que o completa."
            ) from None
        raise BadRequestError(f"Corpo JSON inválido: {_syntax(str(error))}") from None
    except UnicodeDecodeError:
        raise BadRequestError("Corpo JSON inválido: o texto não é UTF-8 válido.") from None
    except RecursionError:
        raise BadRequestError(MAX_DEPTH_MESSAGE) from None


def field_of(error: msgspec.ValidationError) -> str | None:
    """The field a msgspec validation error names (`$.campo` or `$.lista[0]`; a missing
    required field by its name), if any."""
    text = str(error)
    if named := named_field(text):
        return named.campo
    return shown(text.rsplit("$.", 1)[-1].strip("`")) if "$." in text else None


def convert(value: Any, kind: type[T], *, strict: bool = True) -> T:
    """`value` as `kind`, or a 400 naming the unknown or invalid field. Loosely (`strict=False`,
    query strings), a value read as null is refused too (`refuse_nulls`)."""
    try:
        converted = msgspec.convert(value, kind, strict=strict)
    except msgspec.ValidationError as error:
        raise BadRequestError(invalid(str(error)), details={"campo": field_of(error)}) from None
    except RecursionError:
        raise BadRequestError(MAX_DEPTH_MESSAGE) from None
    if not strict and isinstance(value, dict):
        refuse_nulls(value, converted)
    return converted


def refuse_nulls(given: dict[str, Any], value: Any) -> None:
    """A 400 naming a query parameter that was given but converted to null: loosely, msgspec
    reads the text `null` as JSON's null, which would drop a filter (`matriz=null`) without a
    word."""
    if not isinstance(value, msgspec.Struct):
        return
    names = zip(value.__struct_encode_fields__, value.__struct_fields__, strict=True)
    for name, attribute in names:
        if name in given and getattr(value, attribute) is None:
            raise BadRequestError(
                f"Valor inválido em {shown(name)}: {shown(str(given[name]))} não é um valor; "
                "omita o parâmetro.",
                details={"campo": name},
            )


def refuse_repeated(params: dict[str, list[str]]) -> None:
    """400 naming a parameter or form field given more than once, rather than one of its values
    taken silently."""
    repeated = sorted(name for name, values in params.items() if len(values) > 1)
    if repeated:
        raise BadRequestError(
            f"Parâmetro repetido: {', '.join(repeated)}.", details={"campo": repeated[0]}
        )


def single_values(params: dict[str, list[str]]) -> dict[str, str]:
    """Query parameters (or form fields, once `refuse_repeated` passed them) as one value each:
    a query parameter given more than once never reaches a handler (`refuse_repeated` runs in
    `app.lib.guards.reject_unknown_query`, on every route and page)."""
    return {name: values[0] for name, values in params.items()}


def from_query(request: Request[Any, Any, Any], kind: type[T]) -> T:
    """The query string as `kind` (strings converted to each field's type), or a 400."""
    return convert(single_values(request.query_params.dict()), kind, strict=False)


def read(raw: bytes, kind: type[T]) -> T:
    """A JSON body decoded and converted to `kind`, or a 400 saying what is wrong."""
    return convert(decode(raw), kind)


class SafeRequest(Request[Any, Any, Any]):
    """Litestar's request with its JSON parsing routed through `decode`, and a body its route
    declares (`data: JSONBody[Struct]`) checked as strictly as every other body: Litestar
    converts it loosely (`"7"` for a number, `"1"` for true), so it is converted here first, a
    value of the wrong type refused naming its field."""

    async def json(self) -> Any:
        if self._json is Empty:
            if (cached := self._connection_state.json) is not Empty:
                self._json = cached
            else:
                raw = await json_bytes(self)
                value = decode(raw or b"null")
                declared = self.route_handler.parsed_data_field
                struct = declared.annotation if declared is not None else None
                if isinstance(value, dict) and isinstance(struct, type):
                    convert(value, struct)  # strict: the 400 names the field
                self._json = self._connection_state.json = value
        return self._json
