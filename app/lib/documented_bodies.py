"""Request bodies and CNPJ path parameters in the OpenAPI document, as the routes check them.

Litestar writes a body's schema from the Struct's fields but leaves out what the Struct's JSON
Schema (msgspec) says beyond types and bounds: unknown fields refused (`additionalProperties:
false`), formats, constants, and the rules between fields a Struct declares in
`__schema_rules__` or a route in `opt["body_rules"]` (at least one of several fields...).
Routes that read a raw body into a Struct (`opt["body_struct"]`, limited to the names of
`opt["body_fields"]` when given) get no body in the document at all. Both are written here
from msgspec's schema, inline, so a generated client or a fuzzer sends what the API accepts;
a body no Struct describes is written from `opt["body_schema"]` (a JSON Schema).

A CNPJ in a path is checked (14 characters, check digits) by every route but the validator's,
which answers for any text (`opt["cnpj"] == "any"`); the checked ones are documented with
`CNPJ_SCHEMA`.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec
from litestar import Litestar
from litestar.enums import ParamType
from litestar.handlers import HTTPRouteHandler
from litestar.openapi.spec import (
    OpenAPIMediaType,
    OpenAPIType,
    Parameter,
    RequestBody,
    Schema,
)

from app.lib.documented import operations

CNPJ_PATTERN = r"^[0-9A-Za-z]{2}\.?[0-9A-Za-z]{3}\.?[0-9A-Za-z]{3}/?[0-9A-Za-z]{4}-?[0-9]{2}$"
CNPJ_FORMAT = "cnpj"
"""A custom format: 14 characters whose last two are the check digits of the first twelve."""
CNPJ_SCHEMA: dict[str, Any] = {
    "type": "string",
    "format": CNPJ_FORMAT,
    "pattern": CNPJ_PATTERN,
    "description": (
        "14 characters, with or without punctuation (`33683111000280`, `33.683.111/0002-80`); "
        "the first twelve digits or letters (alphanumeric CNPJ, either case), the last two the "
        "check digits"
    ),
    "examples": ["33683111000280", "33.683.111/0002-80"],
}
_RENAMED = {"not": "schema_not", "if": "schema_if", "else": "schema_else"}
_FIELDS = frozenset(Schema.__dataclass_fields__)


def any_of_fields(names: tuple[str, ...] | list[str]) -> dict[str, Any]:
    """The rule "at least one of `names`, not null" of a body."""
    return {
        "anyOf": [
            {"required": [name], "properties": {name: {"not": {"type": "null"}}}} for name in names
        ]
    }


def _snake(key: str) -> str:
    return _RENAMED.get(key) or re.sub(r"(?<!^)([A-Z])", r"_\1", key).lower()


def inline(raw: Any, defs: dict[str, Any]) -> Any:
    """`raw` with every `$ref` to `defs` replaced by its definition (bodies are not
    recursive)."""
    if isinstance(raw, list):
        return [inline(item, defs) for item in raw]
    if not isinstance(raw, dict):
        return raw
    if "$ref" in raw:
        target = defs[raw["$ref"].rsplit("/", 1)[-1]]
        return inline({**target, **{k: v for k, v in raw.items() if k != "$ref"}}, defs)
    return {key: inline(value, defs) for key, value in raw.items()}


def to_schema(raw: dict[str, Any]) -> Schema:
    """Litestar's `Schema` of a JSON Schema without references."""
    values: dict[str, Any] = {}
    for key, value in raw.items():
        name = _snake(key)
        if name not in _FIELDS:
            continue
        if name == "type":
            kinds = value if isinstance(value, list) else [value]
            value = [OpenAPIType(v) for v in kinds] if len(kinds) > 1 else OpenAPIType(kinds[0])
        elif name == "properties":
            value = {prop: to_schema(sub) for prop, sub in value.items()}
        elif name in ("items", "additional_properties", "schema_not") and isinstance(value, dict):
            value = to_schema(value)
        elif name in ("any_of", "one_of", "all_of"):
            value = [to_schema(sub) for sub in value]
        values[name] = value
    return Schema(**values)


def settled(properties: dict[str, Any]) -> dict[str, Any]:
    """`properties` without a `default` their `const` refuses: a confirmation whose Struct
    default is false (so leaving it out is a 400 that says what to confirm) is still shown as
    one that must be sent, true."""
    return {
        name: {key: value for key, value in node.items() if key != "default"}
        if isinstance(node, dict) and "const" in node and node.get("default") != node["const"]
        else node
        for name, node in properties.items()
    }


def body_schema(
    kind: type[Any], fields: tuple[str, ...] | None = None, rules: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The JSON Schema of a body decoded into the Struct `kind` (only `fields` of it when
    given), with the Struct's `__schema_rules__` and `rules`."""
    (ref,), defs = msgspec.json.schema_components((kind,), ref_template="#/$defs/{name}")
    raw: dict[str, Any] = inline(ref, defs)
    if fields is not None:
        raw["properties"] = {k: v for k, v in raw["properties"].items() if k in fields}
        raw["required"] = [k for k in raw.get("required", ()) if k in fields]
    if "properties" in raw:
        raw["properties"] = settled(raw["properties"])
    return {**raw, **getattr(kind, "__schema_rules__", {}), **(rules or {})}


def _body_struct(handler: HTTPRouteHandler) -> type[Any] | None:
    kind = handler.opt.get("body_struct")
    if kind is None and "data" in handler.parsed_fn_signature.parameters:
        kind = handler.parsed_fn_signature.parameters["data"].annotation
    return kind if isinstance(kind, type) and issubclass(kind, msgspec.Struct) else None


def document_bodies(app: Litestar) -> None:
    """Writes each JSON body's schema (see the module)."""
    for handler, _, operation in operations(app):
        kind = _body_struct(handler)
        if kind is not None:
            raw = body_schema(kind, handler.opt.get("body_fields"), handler.opt.get("body_rules"))
        elif "body_schema" in handler.opt:
            raw = handler.opt["body_schema"]
        else:
            continue
        operation.request_body = RequestBody(
            content={"application/json": OpenAPIMediaType(schema=to_schema(raw))},
            description=operation.request_body.description if operation.request_body else None,
            required=True,
        )


def document_cnpj_paths(app: Litestar) -> None:
    """Documents the checked CNPJ of each path with `CNPJ_SCHEMA`."""
    for handler, _, operation in operations(app):
        if handler.opt.get("cnpj") == "any":
            continue
        for parameter in operation.parameters or ():
            if (
                isinstance(parameter, Parameter)
                and parameter.name == "cnpj"
                and parameter.param_in is ParamType.PATH
            ):
                parameter.schema = to_schema(CNPJ_SCHEMA)
