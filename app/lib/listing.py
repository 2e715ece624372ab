"""One page of companies from the index: the shared paging of every company list.

The first page reads the alias; the pages after it read the release index that served the
first, named in the signed cursor (`app.lib.paging`), so a release swap never mixes two
releases in one listing. One hit beyond `limit` is asked for, so a cursor is made only when
there is a next page, and no search context is ever opened.

A list of summaries reads its companies from this process's record store when the store holds
the release that answered (`app.lookup.records`): Elasticsearch finds, counts and sorts, and
reads no document. Without a store (a replica without the file), or around a release swap, the
documents come from Elasticsearch as before.

A query that depends on the date (the leads' score counts a company's age from today) is given
as a function of the day: the first page ranks on today's date (UTC) and its cursor carries that
day, so every later page ranks as the first did, even after midnight.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from functools import partial
from typing import Any

import msgspec
from elasticsearch import NotFoundError

from app.context import Backends
from app.domain.summary import SOURCE_FIELDS, Fonte
from app.lib import paging
from app.lib.elastic import Hit, Hits, SearchResponse, Total, body, decoder

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
    index = position.indice if position else alias
    search = partial(
        backends.es.search,
        index=index,
        query=query,
        sort=listing.sort,
        search_after=list(position.depois) if position else None,
        size=limit + 1,
        track_total_hits=True,
        timeout=timeout,
        aggregations=aggregations or None,
    )
    try:
        found = await _from_store(backends, listing, search)
        if found is None:
            response = await search(source_includes=[*SOURCE_FIELDS, *listing.fields])
            found = _decoder.decode(body(response))
    except NotFoundError as error:
        if position is not None and cursor:
            raise paging.invalid_cursor(cursor) from error
        raise
    hits = found.hits.hits[:limit]
    next_cursor = None
    if len(found.hits.hits) > limit:
        last = hits[-1]
        after = msgspec.convert(last.sort, listing.after)
        next_cursor = backends.cursors.seal(
            paging.Cursor(listing.lista, last.index, after, request_digest, day)
        )
    return Page(hits, found.hits.total.value, next_cursor, found)


BARE: dict[str, Any] = {"source": False, "stored_fields": "_none_"}
"""What a search asks back when the companies are read from the record store: the hits'
release and sort values, no document."""


class _Bare(msgspec.Struct):
    """A hit without its document: the release it is from and its sort values (the last one
    is the CNPJ in every listing)."""

    index: str = msgspec.field(name="_index")
    sort: list[Any]
    score: float | None = msgspec.field(name="_score", default=None)
    matched_queries: list[str] = msgspec.field(default_factory=list)


class _BareHits(msgspec.Struct):
    total: Total
    hits: list[_Bare]


class _BareResponse(msgspec.Struct):
    hits: _BareHits
    aggregations: dict[str, msgspec.Raw] | None = None


_bare = msgspec.json.Decoder(_BareResponse)


async def _from_store(
    backends: Backends, listing: Listing, search: Callable[..., Awaitable[Any]]
) -> SearchResponse[Fonte] | None:
    """The page with its companies read from this process's record store
    (`app.lookup.records`) when it holds the release that answered: Elasticsearch then finds
    and sorts the hits without reading their documents, which costs it about half the CPU of a
    page of filters alone (`scripts/search_source_cost.py`). None when the listing reads fields
    beyond the summary's, or the store does not hold the release or one of its companies: the
    caller searches again, reading the documents."""
    store = backends.records
    if store is None or listing.fields or store.live_index() is None:
        return None
    response = _bare.decode(body(await search(**BARE)))
    hits = response.hits.hits
    releases = {hit.index for hit in hits}
    sources = store.summaries(releases.pop(), [str(hit.sort[-1]) for hit in hits]) if hits else []
    if sources is None or releases:
        return None
    found = [
        Hit(source=source, index=hit.index, score=hit.score, sort=hit.sort,
            matched_queries=hit.matched_queries)
        for hit, source in zip(hits, sources, strict=True)
    ]  # fmt: skip
    return SearchResponse(Hits(response.hits.total, found), response.aggregations)


def _day(text: str, cursor: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise paging.invalid_cursor(cursor) from None
