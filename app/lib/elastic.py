"""The Elasticsearch client the app shares: async, msgspec-backed JSON, bounded timeouts."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

import msgspec
from elastic_transport import JsonSerializer
from elasticsearch import AsyncElasticsearch


class MsgspecSerializer(JsonSerializer):
    """JSON (de)serialisation with msgspec: several times faster than the standard library."""

    mimetype = "application/json"
    _encoder = msgspec.json.Encoder()
    _decoder = msgspec.json.Decoder()

    def loads(self, data: bytes) -> Any:
        return self._decoder.decode(data)

    def dumps(self, data: Any) -> bytes:
        if isinstance(data, bytes):
            return data
        if isinstance(data, str):
            return data.encode("utf-8")
        return self._encoder.encode(data)


class RawSerializer(MsgspecSerializer):
    """Leaves response bodies as bytes: the app decodes each straight into its typed Structs
    (one pass in C), instead of building dictionaries first."""

    def loads(self, data: bytes) -> bytes:
        return bytes(data)


def nodes(url: str) -> list[str]:
    """The node addresses of `ELASTICSEARCH_URL`: one URL, or several separated by commas (the
    nodes of a cluster; each request goes to one, and to another when that one fails)."""
    found = [part.strip() for part in url.split(",") if part.strip()]
    if not found:
        raise ValueError("no Elasticsearch address")
    return found


def create_client(url: str, timeout: float) -> AsyncElasticsearch:
    """The app's client; every response `.body` is raw JSON bytes (see `RawSerializer`).
    `max_retries=1`: a request a node fails to answer (refused, reset) goes once to another
    node, which keeps reads flowing while a cluster loses a node; a timeout is not retried."""
    return AsyncElasticsearch(
        nodes(url),
        request_timeout=timeout,
        max_retries=1,
        retry_on_timeout=False,
        serializers={"application/json": RawSerializer()},
    )


def body(response: Any) -> bytes:
    """The raw JSON of a response or of an error raised by the client."""
    raw = response.body
    return raw if isinstance(raw, bytes) else MsgspecSerializer._encoder.encode(raw)


S = TypeVar("S")


class Hit(msgspec.Struct, Generic[S]):
    source: S = msgspec.field(name="_source")
    index: str = msgspec.field(name="_index", default="")
    score: float | None = msgspec.field(name="_score", default=None)
    sort: list[Any] = msgspec.field(default_factory=list)
    matched_queries: list[str] = msgspec.field(default_factory=list)
    """The `_name` of each named clause the hit matched (to explain a ranking)."""


class Total(msgspec.Struct):
    value: int


class Hits(msgspec.Struct, Generic[S]):
    total: Total = msgspec.field(default_factory=lambda: Total(0))
    hits: list[Hit[S]] = msgspec.field(default_factory=list)


class Bucket(msgspec.Struct):
    key: str | int
    """A keyword's value, or a date histogram's start (epoch milliseconds)."""
    doc_count: int
    key_as_string: str | None = None
    """The formatted key of a date histogram's bucket."""


class Buckets(msgspec.Struct):
    buckets: list[Bucket] = msgspec.field(default_factory=list)


class SearchResponse(msgspec.Struct, Generic[S]):
    """A search answer whose hits' `_source` decode straight into `S` (one pass in C)."""

    hits: Hits[S] = msgspec.field(default_factory=Hits)
    aggregations: dict[str, msgspec.Raw] | None = None

    def buckets(self, name: str) -> list[Bucket]:
        """The buckets of terms aggregation `name` (empty when absent)."""
        raw = (self.aggregations or {}).get(name)
        return _buckets.decode(raw).buckets if raw is not None else []


_buckets = msgspec.json.Decoder(Buckets)


def decoder(source: type[S]) -> msgspec.json.Decoder[SearchResponse[S]]:
    """A reusable decoder of search answers whose hits hold `source` documents."""
    return msgspec.json.Decoder(SearchResponse[source])  # type: ignore[valid-type]
