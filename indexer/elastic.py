"""Elasticsearch side of a load: timestamped indices, parallel bulk requests, the alias swap.

Only APIs that every Elasticsearch 9 distribution has are used (no `_reindex`, no scripts,
no `GET /`): a release goes into a new index, which replaces the previous one behind the read
alias in one atomic `_aliases` call after its document count checks out. The previous index
stays for rollback until it is dropped.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
from elasticsearch import Elasticsearch

from app.domain.catalog import catalog_name
from app.lib.elastic import MsgspecSerializer, nodes

MAPPINGS = Path(__file__).resolve().parent.parent / "mappings" / "empresas.json"
LOAD_SEGMENTS = 100
"""Segments of a tier a load leaves unmerged (the default policy merges at ten)."""
BULK_SETTINGS = {
    "refresh_interval": "-1",
    "number_of_replicas": 0,
    "translog": {"durability": "async", "flush_threshold_size": "1gb"},
    # No merges while the documents arrive: publishing merges the release into one segment
    # anyway, in one pass. Left to the default policy (ten segments a tier, merges throttled
    # to a few MB/s), a 10M load rewrote its data twice over and its publish waited minutes
    # for throttled merges (docs/indexer.md, "Merges while loading"). A load past a hundred
    # flushed segments of about one size (10M flushes about a hundred) merges, unthrottled.
    "merge": {
        "policy": {"segments_per_tier": LOAD_SEGMENTS, "max_merge_at_once": LOAD_SEGMENTS},
        "scheduler": {"auto_throttle": False},
    },
}
SERVING_MERGE = {
    "policy": {"segments_per_tier": None, "max_merge_at_once": None},
    "scheduler": {"auto_throttle": None},
}
"""The merge settings of `BULK_SETTINGS` back to Elasticsearch's defaults."""


class LoadError(Exception):
    """A load that must not go live (count mismatch, cluster refusal...)."""


def connect(url: str, timeout: float = 120.0) -> Elasticsearch:
    return Elasticsearch(
        nodes(url),
        serializers={"application/json": MsgspecSerializer()},
        request_timeout=timeout,
        max_retries=5,
        retry_on_timeout=True,
        retry_on_status=(429, 502, 503, 504),
    )


def load_mapping(path: Path = MAPPINGS) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


def new_index_name(alias: str, now: dt.datetime | None = None) -> str:
    stamp = (now or dt.datetime.now(dt.UTC)).strftime("%Y%m%d%H%M%S%f")
    return f"{alias}-{stamp}"


LOADING = "em_carga"
"""`_meta` key of an index a load created (since the `carregada_em` stamp exists): the index
is unfinished until the stamp is there."""


def create_index(
    es: Elasticsearch,
    name: str,
    mapping: dict[str, Any],
    shards: int | None,
    meta: dict[str, Any] | None = None,
) -> None:
    """A new empty index `name` (`new_index_name`) with bulk-friendly settings (no refresh, no
    replicas); `meta` joins the mapping's `_meta` (the release's month, for `indexer update`)."""
    settings = json.loads(json.dumps(mapping["settings"]))
    settings["index"].update(BULK_SETTINGS)
    if shards:
        settings["index"]["number_of_shards"] = shards
    mappings = {**mapping["mappings"], "_meta": {**mapping["mappings"].get("_meta", {}),
                                                  **(meta or {}), LOADING: True}}  # fmt: skip
    es.indices.create(index=name, settings=settings, mappings=mappings)


def release_month(es: Elasticsearch, alias: str) -> str | None:
    """The month (`YYYY-MM`) of the release the alias serves, when its load recorded one."""
    targets = alias_targets(es, alias)
    if not targets:
        return None
    found = es.indices.get_mapping(index=targets[-1]).body
    meta = next(iter(found.values()))["mappings"].get("_meta", {})
    month = meta.get("release_month")
    return str(month) if month else None


def add_meta(es: Elasticsearch, index: str, values: dict[str, Any]) -> None:
    """Adds `values` to the index's `_meta` (a mapping update replaces `_meta` whole, so the
    values it holds are sent again)."""
    found = es.indices.get_mapping(index=index).body
    meta = next(iter(found.values()))["mappings"].get("_meta", {})
    es.indices.put_mapping(index=index, meta={**meta, **values})


MERGE_TIMEOUT = 3600
"""Seconds a release's merge into one segment may take (minutes at 10M documents)."""


def restore_settings(
    es: Elasticsearch, index: str, mapping: dict[str, Any], replicas: int | None = None
) -> None:
    """Serving settings, one merged segment, then the replicas (`replicas`, else the mapping's):
    they copy the merged segment instead of merging on every node."""
    serving = mapping["settings"]["index"]
    es.indices.put_settings(
        index=index,
        settings={
            "refresh_interval": serving["refresh_interval"],
            "translog": {"durability": "request", "flush_threshold_size": None},
            # A release is written once: blocked for writes, its order never changes, so
            # `search_after` over it pages consistently without a point in time.
            "blocks": {"write": True},
        },
    )
    es.indices.flush(index=index)
    es.indices.refresh(index=index)
    # One segment: a release is read-only, and every clause of a query runs once per segment,
    # so a merged index answers a name search in two thirds of the time (docs/indexer.md).
    es.options(request_timeout=MERGE_TIMEOUT).indices.forcemerge(
        index=index, max_num_segments=1, wait_for_completion=True
    )
    # After the merge: back to the default policy before it, the flushed segments would start
    # a throttled merge that the forced one waits for.
    es.indices.put_settings(index=index, settings={"merge": SERVING_MERGE})
    copies = serving["number_of_replicas"] if replicas is None else replicas
    if copies:
        es.indices.put_settings(index=index, settings={"number_of_replicas": copies})
        wait_for_replicas(es, index, copies)


REPLICA_TIMEOUT = "30m"


def wait_for_replicas(es: Elasticsearch, index: str, replicas: int) -> None:
    """Waits until every copy of `index` is allocated (green), or, on a cluster with too few
    data nodes to hold them all, its primaries (yellow): a release does not go live before the
    cluster can serve it from more than one node when it has them."""
    data_nodes = int(es.cluster.health()["number_of_data_nodes"])
    wanted = "green" if data_nodes > replicas else "yellow"
    health = es.options(request_timeout=MERGE_TIMEOUT).cluster.health(
        index=index, wait_for_status=wanted, timeout=REPLICA_TIMEOUT
    )
    if health["timed_out"]:
        raise LoadError(f"index {index} not {wanted} after {REPLICA_TIMEOUT}: {health['status']}")


def count(es: Elasticsearch, index: str) -> int:
    return int(es.count(index=index)["count"])


# ------------------------------------------------------------------ bulk


class ItemError(msgspec.Struct, frozen=True):
    id: str
    status: int
    reason: str


@dataclass(slots=True)
class BulkOutcome:
    created: int = 0
    duplicates: int = 0
    """Rows whose CNPJ was already taken in this load (counted by the builder, not sent)."""
    new: int = 0
    changed: int = 0
    unchanged: int = 0
    errors: list[ItemError] = field(default_factory=list)

    def merge(self, other: BulkOutcome, max_errors: int) -> None:
        """Add `other`'s counts; keep at most `max_errors` more of its item errors."""
        self.created += other.created
        self.duplicates += other.duplicates
        self.new += other.new
        self.changed += other.changed
        self.unchanged += other.unchanged
        self.errors.extend(other.errors[: max(max_errors, 0)])


@dataclass(frozen=True, slots=True)
class Batch:
    ids: list[str]
    """The documents' CNPJs, which identify them in reports and comparisons."""
    bodies: list[bytes]
    hashes: list[str]


def _compare(es: Elasticsearch, previous: str, batch: Batch, outcome: BulkOutcome) -> None:
    before = stored_hashes(es, previous, batch.ids)
    for doc_id, digest in zip(batch.ids, batch.hashes, strict=True):
        old = before.get(doc_id)
        if old is None:
            outcome.new += 1
        elif old == digest:
            outcome.unchanged += 1
        else:
            outcome.changed += 1


_CREATE = b'{"create":{}}\n'


def _send(es: Elasticsearch, index: str, batch: Batch, previous: str | None) -> BulkOutcome:
    """One `_bulk` request of `create` actions with ids Elasticsearch generates (appending
    without an id lookup per document is much cheaper than indexing under the CNPJ); the
    response carries statuses and errors only, matched to CNPJs by position."""
    outcome = BulkOutcome()
    if previous:
        _compare(es, previous, batch, outcome)
    else:
        outcome.new = len(batch.ids)
    response = es.bulk(
        index=index,
        operations=b"".join(_CREATE + body + b"\n" for body in batch.bodies),  # type: ignore[arg-type]  # pre-encoded NDJSON is sent as is
        filter_path="errors,items.*.status,items.*.error",
    )
    if not response.get("errors"):
        outcome.created = len(batch.ids)
        return outcome
    failed = 0
    for doc_id, item in zip(batch.ids, response.get("items", []), strict=False):
        result = item["create"]
        if "error" not in result:
            continue
        failed += 1
        error = result["error"]
        reason = f"{error.get('type', 'error')}: {error.get('reason', '')}"[:500]
        outcome.errors.append(ItemError(doc_id, result["status"], reason))
    outcome.created = len(batch.ids) - failed
    return outcome


def bulk_load(
    es: Elasticsearch,
    index: str,
    batches: Iterable[Batch],
    previous: str | None = None,
    parallel: int = 2,
) -> Iterator[tuple[Batch, BulkOutcome]]:
    """Send batches as parallel bulk requests, at most `parallel` in flight (bounded memory).

    With a `previous` index, each batch's content hashes are compared with the ones stored
    there first, so the load can tell new, changed and unchanged records apart.
    """
    with ThreadPoolExecutor(max_workers=parallel, thread_name_prefix="bulk") as pool:
        pending: dict[Future[BulkOutcome], Batch] = {}
        for batch in batches:
            if len(pending) >= parallel:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    yield pending.pop(future), future.result()
            pending[pool.submit(_send, es, index, batch, previous)] = batch
        for future, batch in list(pending.items()):
            yield batch, future.result()


def stored_hashes(es: Elasticsearch, index: str, ids: list[str]) -> dict[str, str]:
    """Content hashes of the CNPJs `ids` in `index` (read from doc values, not `_source`)."""
    response = es.search(
        index=index,
        query={"terms": {"cnpj": ids}},
        size=len(ids),
        source=False,
        docvalue_fields=["cnpj", "hash"],  # type: ignore[list-item]
        track_total_hits=False,
        filter_path="hits.hits.fields",
    )
    return {
        hit["fields"]["cnpj"][0]: hit["fields"]["hash"][0]
        for hit in response.get("hits", {}).get("hits", [])
        if "fields" in hit
    }


# ------------------------------------------------------------------ aliases


@dataclass(frozen=True, slots=True)
class IndexInfo:
    name: str
    docs: int
    size: str
    created: str
    live: bool


def alias_targets(es: Elasticsearch, alias: str) -> list[str]:
    if not es.indices.exists_alias(name=alias):
        return []
    return sorted(es.indices.get_alias(name=alias).body)


def _point(es: Elasticsearch, alias: str, index: str) -> tuple[list[dict[str, Any]], list[str]]:
    previous = [name for name in alias_targets(es, alias) if name != index]
    actions: list[dict[str, Any]] = [
        {"remove": {"index": name, "alias": alias}} for name in previous
    ]
    actions.append({"add": {"index": index, "alias": alias}})
    return actions, previous


def swap_alias(es: Elasticsearch, alias: str, index: str) -> list[str]:
    """Point `alias` at `index` alone, and the catalog alias at its catalog when it has one,
    in one atomic call; returns the release indices `alias` left."""
    actions, previous = _point(es, alias, index)
    if es.indices.exists(index=catalog_name(index)):
        actions += _point(es, catalog_name(alias), catalog_name(index))[0]
    es.indices.update_aliases(actions=actions)
    return previous


def _release_states(es: Elasticsearch, alias: str) -> dict[str, bool]:
    """Each release index of `alias` (live or not), and whether a load finished it: not when it
    still has the bulk settings (no refresh), nor when a load created it and never stamped it
    with `carregada_em` (`load._publish`, after the count, the merge and the catalog: killed
    while merging or building the catalog). An index made before the stamp existed has neither
    mark and is judged by its settings alone."""
    pattern = re.compile(re.escape(alias) + r"-\d{20}")
    mappings = es.indices.get_mapping(index=f"{alias}-*", allow_no_indices=True).body
    settings = es.indices.get_settings(
        index=f"{alias}-*", name="index.refresh_interval", allow_no_indices=True
    ).body
    states = {}
    for name, body in mappings.items():
        if not pattern.fullmatch(name):
            continue
        meta = body.get("mappings", {}).get("_meta", {})
        index = settings.get(name, {}).get("settings", {}).get("index", {})
        bulk = index.get("refresh_interval") == BULK_SETTINGS["refresh_interval"]
        states[name] = not bulk and not (meta.get(LOADING) and "carregada_em" not in meta)
    return states


def finished(es: Elasticsearch, alias: str) -> set[str]:
    """The release indices of `alias` a load finished (`_release_states`)."""
    return {name for name, done in _release_states(es, alias).items() if done}


def unfinished(es: Elasticsearch, alias: str) -> list[str]:
    """The indices of `alias` a load created and never finished (`_release_states`): what a load
    killed before its end (SIGKILL, a machine lost) left. The indices the alias points at are
    never among them."""
    live = set(alias_targets(es, alias))
    states = _release_states(es, alias)
    return sorted(name for name, done in states.items() if not done and name not in live)


def delete_release(es: Elasticsearch, index: str) -> None:
    """Delete a release index and its catalog."""
    es.indices.delete(index=[index, catalog_name(index)], ignore_unavailable=True)


def list_indices(es: Elasticsearch, alias: str) -> list[IndexInfo]:
    """The release indices of `alias`, newest first."""
    live = set(alias_targets(es, alias))
    rows: list[dict[str, Any]] = es.cat.indices(  # type: ignore[assignment]
        index=f"{alias}-*", format="json", h="index,docs.count,store.size,creation.date.string"
    ).body
    infos = [
        IndexInfo(
            name=row["index"],
            docs=int(row.get("docs.count") or 0),
            size=row.get("store.size") or "",
            created=row.get("creation.date.string") or "",
            live=row["index"] in live,
        )
        for row in rows
        if _is_release(row["index"], alias)
    ]
    return sorted(infos, key=lambda info: info.name, reverse=True)


def _is_release(name: str, alias: str) -> bool:
    suffix = name[len(alias) + 1 :]
    return name.startswith(alias + "-") and suffix.isdigit() and len(suffix) == 20


def rollback(es: Elasticsearch, alias: str) -> tuple[str, str]:
    """Point the alias back at the finished release before the live one (never at what a killed
    load left); returns (from, to)."""
    indices = list_indices(es, alias)
    done = finished(es, alias)
    names = [info.name for info in indices if info.name in done]
    live = [info.name for info in indices if info.live]
    if not live:
        raise LoadError(f"alias {alias!r} points at no release index")
    older = [name for name in names if name < min(live)]
    if not older:
        raise LoadError(f"no finished release older than {min(live)} to roll back to")
    swap_alias(es, alias, older[0])
    return min(live), older[0]


def drop_old(es: Elasticsearch, alias: str, keep: int) -> list[str]:
    """Delete finished release indices beyond the `keep` newest finished ones; the live one is
    never deleted, and what a killed load left is not counted (the next load deletes it)."""
    done = finished(es, alias)
    indices = [info for info in list_indices(es, alias) if info.name in done or info.live]
    doomed = [info.name for info in indices[keep:] if not info.live]
    for name in doomed:
        delete_release(es, name)
    return doomed
