"""JSON Schemas of tool inputs and outputs, generated from the same msgspec Structs the service
functions take and return (never written by hand).

msgspec gives `{"$ref": "#/$defs/Name", "$defs": {...}}`; MCP wants an object schema at the top,
so the referenced definition is lifted up and the other definitions stay beside it. Decimals are
sent as JSON numbers (as REST does), so their schema says `number`."""

from __future__ import annotations

from typing import Any

import msgspec

from app.lib.documented_bodies import settled

DRAFT = "https://json-schema.org/draft/2020-12/schema"


def _numbers(node: Any) -> Any:
    if isinstance(node, dict):
        if node.get("type") == "string" and node.get("format") == "decimal":
            return {key: value for key, value in node.items() if key != "format"} | {
                "type": "number"
            }
        return {key: _numbers(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_numbers(item) for item in node]
    return node


def object_schema(kind: Any) -> dict[str, Any]:
    """The JSON Schema of Struct `kind`, with an object at the top, and the fields its
    `__schema_rules__` require (as REST documents them). The rules' combinators (`anyOf`: an
    activity or a place) stay out of a tool's schema, since several agent platforms refuse them
    at its top; the tool's description states them and the service checks them."""
    generated: dict[str, Any] = _numbers(msgspec.json.schema(kind))
    definitions: dict[str, Any] = generated.pop("$defs", {})
    reference = generated.get("$ref", "")
    top = definitions.pop(reference.rsplit("/", 1)[-1], generated) if reference else generated
    schema = {"$schema": DRAFT, **top}
    if "properties" in schema:
        schema["properties"] = settled(schema["properties"])
    required = getattr(kind, "__schema_rules__", {}).get("required")
    if required is not None:
        schema["required"] = list(required)
    if definitions:
        schema["$defs"] = definitions
    return schema
