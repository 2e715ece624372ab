"""Opaque cursors for lists paged by `search_after` inside a point in time.

A cursor is base64url JSON of the point in time, the last hit's sort values and a digest of the
request that produced it, so it cannot be replayed with other filters; a point in time keeps
every page on the same index while the alias moves to a new release.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from typing import Any

import msgspec

from app.errors import BadRequestError

KEEP_ALIVE = "2m"
MAX_CURSOR = 4096


class Cursor(msgspec.Struct, frozen=True):
    pit: str
    after: list[Any]
    filters: str


def digest(request: Any) -> str:
    return hashlib.sha256(msgspec.json.encode(request)).hexdigest()[:16]


def encode_cursor(cursor: Cursor) -> str:
    return base64.urlsafe_b64encode(msgspec.json.encode(cursor)).decode().rstrip("=")


def invalid_cursor(raw: str) -> BadRequestError:
    return BadRequestError(
        "cursor inválido ou expirado: refaça a busca sem cursor.",
        details={"campo": "cursor", "valor": raw[:64]},
    )


def decode_cursor(raw: str, request_digest: str, sort_values: int) -> Cursor:
    """The cursor in `raw`, checked against the request it must continue."""
    if len(raw) > MAX_CURSOR:
        raise invalid_cursor(raw)
    try:
        padded = raw + "=" * (-len(raw) % 4)
        cursor = msgspec.json.decode(base64.urlsafe_b64decode(padded), type=Cursor)
    except (binascii.Error, ValueError, msgspec.DecodeError) as error:
        raise invalid_cursor(raw) from error
    if cursor.filters != request_digest or len(cursor.after) != sort_values:
        raise invalid_cursor(raw)
    if not all(isinstance(value, (int, float, str)) for value in cursor.after):
        raise invalid_cursor(raw)
    return cursor
