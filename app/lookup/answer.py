"""The answer to a lookup by CNPJ, shared by the route and its fast lane (`app.lookup.fast`):
the record (its public part for a call without a key) or 304 when `If-None-Match` names its
`ETag`, with the release's reference date."""

from __future__ import annotations

from typing import NamedTuple

from app.domain.record import Empresa, public_view
from app.lib import release
from app.lib.responses import ENCODER, entity_tag, matches, validators


class Answer(NamedTuple):
    status: int
    body: bytes
    headers: dict[str, str]


def record_answer(company: Empresa, *, anonymous: bool, if_none_match: str | None) -> Answer:
    view = "publica" if anonymous else "completa"
    tag = entity_tag(company.hash, f"{view}.{company.data_referencia or ''}")
    headers = validators(tag) if tag is not None else {}
    headers.update(release.header(company.data_referencia))
    if tag is not None and matches(if_none_match, tag):
        return Answer(304, b"", headers)
    return Answer(200, ENCODER.encode(public_view(company) if anonymous else company), headers)
