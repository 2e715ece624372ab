"""JSON responses encoded by msgspec with exact decimals written as JSON numbers, and the HTTP
validators (`ETag`, `If-None-Match`, 304) of records."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Any

import msgspec
from litestar import Response

ENCODER = msgspec.json.Encoder(decimal_format="number")


def _version() -> str:
    try:
        return version("cnpj-registry")
    except PackageNotFoundError:  # pragma: no cover - run from a tree without its metadata
        return "0"


VERSION = _version()


def json_response(content: Any, status_code: int = 200) -> Response[bytes]:
    return Response(ENCODER.encode(content), status_code=status_code, media_type="application/json")


def entity_tag(content_hash: str, view: str) -> str | None:
    """A strong `ETag` for a record's representation: its content hash (which changes with any
    field of the record), the view (`completa`, `publica`) and the app's version (which may
    change how a record is written out). None for a record without a hash."""
    if not content_hash:
        return None
    return f'"{content_hash[:32]}.{view}.{VERSION}"'


def matches(header: str | None, tag: str) -> bool:
    """Whether `If-None-Match` names `tag` (or is `*`); weak comparison, as RFC 9110 asks for
    `If-None-Match`."""
    if not header or len(header) > 4096:
        return False
    wanted = tag.removeprefix("W/")
    for item in header.split(","):
        value = item.strip()
        if value == "*" or value.removeprefix("W/") == wanted:
            return True
    return False


def validators(tag: str) -> dict[str, str]:
    """The headers that let a client revalidate instead of downloading again."""
    return {"ETag": tag, "Cache-Control": "private, no-cache"}
