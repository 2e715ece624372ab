"""Opaque, signed cursors for lists paged by `search_after` (or by id).

A cursor names the list that made it, the release index that served its first page, the last
item's sort values and a digest of the request, and carries an HMAC-SHA256 of all that under a
key derived from the server secret. A cursor that was altered, made for another list or
another request, or whose values are not of the list's types, is a 400; so is one whose index
has since been dropped (expired).

Pages after the first read the concrete release index named in the cursor, not the alias:
release indices are written once and then blocked for writes (`indexer.elastic`), so
`search_after` over one is consistent without an Elasticsearch point in time, and no search
context is left open on the cluster, however many first pages callers ask for. A listing
started before a release swap keeps reading its release to the last page.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from typing import Annotated, Any, Generic, Protocol, TypeVar

import msgspec

from app.errors import BadRequestError

MAX_CURSOR = 1024
A = TypeVar("A")


class _Row(Protocol):
    @property
    def id(self) -> int: ...


R = TypeVar("R", bound=_Row)
CursorTexto = Annotated[
    str,
    msgspec.Meta(
        max_length=MAX_CURSOR,
        description="O next_cursor da página anterior, com os mesmos filtros.",
    ),
]


class Cursor(msgspec.Struct, Generic[A], frozen=True, array_like=True, forbid_unknown_fields=True):
    lista: str
    """Which list made the cursor: `busca`, `socios`, `auditoria`."""
    indice: str
    """The release index the listing reads (empty for lists outside Elasticsearch)."""
    depois: A
    """The last item's sort values, typed by the list."""
    pedido: str
    """Digest of the request that made it (filters, text), so it cannot be replayed on another."""
    dia: str = ""
    """The day (UTC, ISO) a list ranked by the date was ranked on, kept for its next pages
    (`app.lib.listing.fetch` with a dated query); empty for the other lists."""


def digest(request: Any) -> str:
    return hashlib.sha256(msgspec.json.encode(request)).hexdigest()[:16]


def invalid_cursor(raw: str) -> BadRequestError:
    return BadRequestError(
        "cursor inválido ou expirado: refaça a busca sem cursor.",
        details={"campo": "cursor", "valor": raw[:64]},
    )


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Cursors:
    """Seals and opens cursors with a key derived from the server secret."""

    def __init__(self, secret: bytes) -> None:
        self._key = hmac.new(secret, b"cursor-v1", hashlib.sha256).digest()

    def _mac(self, payload: bytes) -> bytes:
        return hmac.new(self._key, payload, hashlib.sha256).digest()[:16]

    def seal(self, cursor: Cursor[Any]) -> str:
        payload = msgspec.json.encode(cursor)
        return f"{_b64(payload)}.{_b64(self._mac(payload))}"

    def open(self, raw: str, lista: str, after: Any, request_digest: str) -> Cursor[Any]:
        """The cursor in `raw`, if this server sealed it for list `lista` and this request."""
        payload_text, _, mac_text = raw.partition(".")
        if len(raw) > MAX_CURSOR or not mac_text:
            raise invalid_cursor(raw)
        try:
            payload, mac = _unb64(payload_text), _unb64(mac_text)
        except (binascii.Error, ValueError):
            raise invalid_cursor(raw) from None
        if not hmac.compare_digest(mac, self._mac(payload)):
            raise invalid_cursor(raw)
        try:
            cursor: Cursor[Any] = msgspec.json.decode(payload, type=Cursor[after])
        except msgspec.DecodeError:
            raise invalid_cursor(raw) from None
        if cursor.lista != lista or cursor.pedido != request_digest:
            raise invalid_cursor(raw)
        return cursor

    def after_id(self, raw: str | None, lista: str, request_digest: str) -> int | None:
        """The last id of the previous page, for a list paged by row id (None: first page)."""
        if not raw:
            return None
        return int(self.open(raw, lista, tuple[int], request_digest).depois[0])

    def next_by_id(
        self, rows: list[R], limit: int, lista: str, request_digest: str
    ) -> tuple[list[R], str | None]:
        """The page (rows fetched with `limit + 1`) and the cursor to the next one, if any."""
        if len(rows) <= limit:
            return rows, None
        page = rows[:limit]
        return page, self.seal(Cursor(lista, "", (page[-1].id,), request_digest))
