"""The error answers every operation can give, written into the OpenAPI document.

Every error the API answers has the body `ErrorBody` (`{error, message, details?}`), whatever
raised it; without this, the document would show Litestar's default validation body
(`{detail, status_code, extra}`) for 400 and leave out the statuses the access layer, the body
limit and the dependencies give. An operation's own description of a status (a route's
`responses`) is kept; the rest come from the operation's access kind, its path parameters and
its method.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import msgspec
from litestar import Litestar
from litestar._openapi.schema_generation import SchemaCreator
from litestar.enums import ParamType
from litestar.handlers import HTTPRouteHandler
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import OpenAPIType, Operation, Parameter, Schema
from litestar.plugins import OpenAPISchemaPlugin
from litestar.typing import FieldDefinition

from app.auth.access import Access
from app.errors import ErrorBody

KEYED = (Access.PROTECTED, Access.ANONYMOUS)


def _spec(description: str) -> ResponseSpec:
    return ResponseSpec(data_container=ErrorBody, generate_examples=False, description=description)


BAD_REQUEST = _spec("Invalid parameters or body: `message` says which, `details` names the field")
UNAUTHORIZED = _spec(
    "Key missing, malformed, unknown or revoked, or sent outside `Authorization: Bearer`"
)
FORBIDDEN = _spec("Address outside the key's allowlist, or a resource of administrators")
NOT_FOUND = _spec("No such resource")
TOO_LARGE = _spec("Body larger than the limit (`MAX_BODY_SIZE`), refused before any work")
NOT_JSON = _spec("A body declared as another type than JSON (`Content-Type`); none is read as JSON")
TOO_MANY = _spec("The window of the key's plan or of the address is full; see `Retry-After`")
CONFLICT = _spec("The state of the resource does not allow it now; `message` says why")
GONE = _spec("The resource existed and is no longer available")
UNAVAILABLE = _spec(
    "A dependency is unavailable or the server is at capacity; retry after `Retry-After`"
)


def errors_of(handler: HTTPRouteHandler) -> dict[int, ResponseSpec]:
    kind = Access(handler.opt.get("access", Access.PROTECTED))
    found = {400: BAD_REQUEST, 503: UNAVAILABLE}
    if kind in KEYED:
        found.update({401: UNAUTHORIZED, 403: FORBIDDEN, 429: TOO_MANY})
    if kind is Access.BOOTSTRAP:
        found[429] = TOO_MANY
    if any("{" in path for path in handler.paths):
        found[404] = NOT_FOUND
    if handler.http_methods & {"POST", "PUT", "PATCH"}:
        found.update({413: TOO_LARGE, 415: NOT_JSON})
    return found


def document_errors(app: Litestar) -> None:
    """Adds the error answers each operation of the document can give (before the document
    is first generated)."""
    for route in app.routes:
        for handler in getattr(route, "route_handlers", ()):
            if not isinstance(handler, HTTPRouteHandler) or not handler.include_in_schema:
                continue
            if Access(handler.opt.get("access", Access.PROTECTED)) is Access.AGENT:
                continue  # JSON-RPC: errors are JSON-RPC answers (`docs/mcp.md`)
            handler.responses = {**errors_of(handler), **(handler.responses or {})}


_KEYS = {
    "type": "type", "format": "format", "maxLength": "max_length", "minLength": "min_length",
    "pattern": "pattern", "enum": "enum", "minimum": "minimum", "maximum": "maximum",
    "exclusiveMinimum": "exclusive_minimum", "exclusiveMaximum": "exclusive_maximum",
    "description": "description", "examples": "examples", "default": "default",
}  # fmt: skip
"""JSON Schema keywords msgspec writes, by the name of Litestar's `Schema` field."""


def _schema(raw: dict[str, Any], defs: dict[str, Any]) -> Schema:
    """A query parameter's schema from msgspec's JSON Schema of the field (null dropped: an
    absent parameter is the null)."""
    if "$ref" in raw:
        raw = {
            **defs[raw["$ref"].rsplit("/", 1)[-1]],
            **{k: v for k, v in raw.items() if k != "$ref"},
        }
    if "anyOf" in raw:
        options = [item for item in raw["anyOf"] if item.get("type") != "null"]
        rest = {k: v for k, v in raw.items() if k != "anyOf"}
        if len(options) == 1:
            return _schema({**options[0], **rest}, defs)
        return Schema(any_of=[_schema(item, defs) for item in options],
                      description=rest.get("description"))  # fmt: skip
    values = {_KEYS[k]: v for k, v in raw.items() if k in _KEYS}
    if "type" in values:
        values["type"] = OpenAPIType(values["type"])
    return Schema(**values)


def query_parameters(
    kind: type[Any], names: tuple[str, ...], needed: tuple[str, ...] = ()
) -> list[Parameter]:
    """The query parameters `names` of the Struct `kind` a route reads its query string into,
    with the field's type, bounds, pattern, vocabulary and description; required when the
    Struct requires them or they are in `needed` (the route requires them)."""
    _, defs = msgspec.json.schema_components((kind,), ref_template="#/$defs/{name}")
    struct = defs[kind.__name__]
    properties: dict[str, Any] = struct.get("properties", {})
    required = {*struct.get("required", ()), *needed}
    return [
        Parameter(
            name=name,
            param_in=ParamType.QUERY,
            required=name in required,
            schema=_schema(properties[name], defs),
            description=properties[name].get("description"),
        )
        for name in names
        if name in properties
    ]


def operations(app: Litestar) -> list[tuple[HTTPRouteHandler, str, Operation]]:
    """Every operation of the document with the handler that answers it and its method."""
    openapi = app.openapi_schema
    found: list[tuple[HTTPRouteHandler, str, Operation]] = []
    for route in app.routes:
        item = (openapi.paths or {}).get(route.path_format or route.path)
        for handler in getattr(route, "route_handlers", ()):
            if not isinstance(handler, HTTPRouteHandler) or not handler.include_in_schema:
                continue
            for method in handler.http_methods:
                operation = getattr(item, method.lower(), None) if item is not None else None
                if operation is not None:
                    found.append((handler, method, operation))
    return found


def document_queries(app: Litestar) -> None:
    """Writes the query parameters of the routes that read their query string into a Struct
    (`opt["query_struct"]`, the names of `opt["query"]`, required if in
    `opt["query_required"]`) into the document, which Litestar cannot see in their
    signatures."""
    for handler, method, operation in operations(app):
        kind = handler.opt.get("query_struct")
        if kind is None or method != "GET":
            continue
        found = query_parameters(
            kind, tuple(handler.opt.get("query", ())), handler.opt.get("query_required", ())
        )
        known = {getattr(p, "name", None) for p in operation.parameters or []}
        operation.parameters = [*(operation.parameters or []),
                                *(p for p in found if p.name not in known)]  # fmt: skip


class DecimalAsNumber(OpenAPISchemaPlugin):
    """Decimals (`capital_social`) are written as JSON numbers (`decimal_format="number"`), so
    the document says number, not Litestar's default string."""

    @staticmethod
    def is_plugin_supported_type(value: Any) -> bool:
        return value is Decimal

    def to_openapi_schema(
        self, field_definition: FieldDefinition, schema_creator: SchemaCreator
    ) -> Schema:
        return Schema(type=OpenAPIType.NUMBER)
