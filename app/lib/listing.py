"""One page of companies from the index: the shared paging of every company list.

The first page reads the alias; the pages after it read the release index that served the
first, named in the signed cursor (`app.lib.paging`), so a release swap never mixes two
releases in one listing. One hit beyond `limit` is asked for, so a cursor is made only when
there is a next page, and no search context is ever opened.

A query that depends on the date (the leads' score counts a company's age from today) is given
as a function of the day: the first page ranks on today's date (UTC) and its cursor carries that
day, so every later page ranks as the first did, even after midnight.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

import msgspec
from elasticsearch import NotFoundError

from app.context import Backends
from app.domain.summary import SOURCE_FIELDS, Fonte
from app.lib import paging
from app.lib.elastic import Hit, SearchResponse, body, decoder

_decoder = decoder(Fonte)
Query = dict[str, Any] | Callable[[date], dict[str, Any]]
"""A query, or a query of the day a listing ranks on."""


@dataclass(frozen=True, slots=True)
class Page:
    hits: list[Hit[Fonte]]
    total: int
    next_cursor: str | None
    response: SearchResponse[Fonte]


@dataclass(frozen=True, slots=True)
class Listing:
    """How one list pages: its name in cursors, its sort, and the type of its sort values."""

    lista: str
    sort: list[dict[str, Any]]
    after: Any
    """The type of a hit's sort values (`tuple[float, str]`...), checked on every cursor."""
    fields: tuple[str, ...] = ()
    """Indexed fields read beyond the summary's."""


async def fetch(
    backends: Backends,
    listing: Listing,
    query: Query,
    *,
    limit: int,
    cursor: str | None,
    request_digest: str,
    aggregations: dict[str, Any] | None = None,
    timeout: str | None = None,
) -> Page:
    """One page of `query`'s hits; `cursor` continues a previous page of the same request."""
    alias = backends.alias
    position: paging.Cursor[Any] | None = None
    if cursor:
        position = backends.cursors.open(cursor, listing.lista, listing.after, request_digest)
        if not position.indice.startswith(f"{alias}-"):
            raise paging.invalid_cursor(cursor)
    day = ""
    if callable(query):
        # Today, or the day the first page ranked on (a cursor made before cursors carried
        # the day has none: today).
        ranked_on = datetime.now(UTC).date()
        if position is not None and position.dia:
            ranked_on = _day(position.dia, cursor or "")
        day, query = ranked_on.isoformat(), query(ranked_on)
    try:
        response = await backends.es.search(
            index=position.indice if position else alias,
            query=query,
            sort=listing.sort,
            search_after=list(position.depois) if position else None,
            size=limit + 1,
            source_includes=[*SOURCE_FIELDS, *listing.fields],
            track_total_hits=True,
            timeout=timeout,
            aggregations=aggregations or None,
        )
    except NotFoundError as error:
        if position is not None and cursor:
            raise paging.invalid_cursor(cursor) from error
        raise
    found = _decoder.decode(body(response))
    hits = found.hits.hits[:limit]
    next_cursor = None
    if len(found.hits.hits) > limit:
        last = hits[-1]
        after = msgspec.convert(last.sort, listing.after)
        next_cursor = backends.cursors.seal(
            paging.Cursor(listing.lista, last.index, after, request_digest, day)
        )
    return Page(hits, found.hits.total.value, next_cursor, found)


def _day(text: str, cursor: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise paging.invalid_cursor(cursor) from None
