"""Which release answered: the reference date and load time the indexer keeps in each release
index's `_meta` (`indexer.load`), for `/v1/status` and the `X-Data-Referencia` header.

Records carry their release's reference date themselves (`data_referencia`); this module
answers for what has no record to read it from (an empty page, the status). A process reads the
live release's metadata at most once a second.
"""

from __future__ import annotations

import time
from typing import Any

import msgspec
from elasticsearch import AsyncElasticsearch

from app.lib.elastic import body

HEADER = "X-Data-Referencia"
CHECK_EVERY = 1.0


class Release(msgspec.Struct, kw_only=True, omit_defaults=True):
    indice: str
    data_referencia: str | None = None
    """The release's reference date (`YYYY-MM-DD`)."""
    carregada_em: str | None = None
    """When the indexer published it (UTC, ISO 8601)."""


class _Mapping(msgspec.Struct):
    mappings: dict[str, Any] = msgspec.field(default_factory=dict)


_mappings = msgspec.json.Decoder(dict[str, _Mapping])


async def releases(es: AsyncElasticsearch, alias: str) -> list[Release]:
    """The indices behind `alias` (or the index of that name) with their metadata, by name."""
    found = _mappings.decode(body(await es.indices.get_mapping(index=alias)))
    described = []
    for name in sorted(found):
        meta = found[name].mappings.get("_meta") or {}
        described.append(
            Release(
                indice=name,
                data_referencia=_text(meta.get("data_referencia")),
                carregada_em=_text(meta.get("carregada_em")),
            )
        )
    return described


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


class LiveRelease:
    """The live release of an alias, read at most once a second per process."""

    def __init__(self) -> None:
        self._release: Release | None = None
        self._read = float("-inf")

    async def get(self, es: AsyncElasticsearch, alias: str) -> Release | None:
        now = time.monotonic()
        if now - self._read >= CHECK_EVERY:
            found = await releases(es, alias)
            self._release = found[-1] if found else None
            self._read = now
        return self._release


def header(data_referencia: str | None) -> dict[str, str]:
    """The response header naming the reference date of the release that answered."""
    return {HEADER: data_referencia} if data_referencia else {}
