"""The answer to a lookup by CNPJ, shared by the route and its fast lane (`app.lookup.fast`):
the record (its public part for a call without a key) or 304 when `If-None-Match` names its
`ETag`, with the release's reference date."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from app.domain.record import Empresa, public_view
from app.lib import release
from app.lib.responses import ENCODER, entity_tag, matches, validators
from app.lookup.records import Stored


class Answer(NamedTuple):
    status: int
    body: bytes
    headers: dict[str, str]


def _answer(
    content_hash: str,
    data_referencia: str | None,
    view: str,
    if_none_match: str | None,
    body: Callable[[], bytes],
) -> Answer:
    tag = entity_tag(content_hash, f"{view}.{data_referencia or ''}")
    headers = validators(tag) if tag is not None else {}
    headers.update(release.header(data_referencia))
    if tag is not None and matches(if_none_match, tag):
        return Answer(304, b"", headers)
    return Answer(200, body(), headers)


def record_answer(company: Empresa, *, anonymous: bool, if_none_match: str | None) -> Answer:
    view = "publica" if anonymous else "completa"
    return _answer(
        company.hash,
        company.data_referencia,
        view,
        if_none_match,
        lambda: ENCODER.encode(public_view(company) if anonymous else company),
    )


def stored_answer(stored: Stored, *, anonymous: bool, if_none_match: str | None) -> Answer:
    """`record_answer` of a record from the store: with a key, its bytes as they are."""
    if anonymous:
        return record_answer(stored.company(), anonymous=True, if_none_match=if_none_match)
    return _answer(
        stored.hash, stored.data_referencia, "completa", if_none_match, lambda: stored.body
    )
