"""A real two-node Elasticsearch cluster on loopback (`scripts/services.sh cluster`): the indexer
creates a release with shards and replicas on both nodes, the app reads through the list of node
addresses, and with reads running the data node is killed (SIGKILL): no read fails, `/v1/status`
reports the cluster yellow, the node rejoins and the cluster is green again. The short version of
`scripts/failover.py` (its figures: docs/scaling.md)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from indexer import elastic
from indexer.load import Options, Progress, run
from scripts.failover import cluster, drive, sample_reads
from tests.conftest import SAMPLE, MakeKey, serving


@pytest.fixture(scope="module")
def cluster_urls() -> Iterator[str]:
    """The two nodes' addresses, as `ELASTICSEARCH_URL` lists them; stopped after the module."""
    urls = cluster("up").splitlines()[-1]
    try:
        yield urls
    finally:
        cluster("down")


@pytest.fixture(scope="module")
def cluster_alias(cluster_urls: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The sample release loaded into the cluster: two shards, one replica each."""
    alias = f"test-cluster-{uuid.uuid4().hex[:8]}"
    es = elastic.connect(cluster_urls)
    bad_rows = tmp_path_factory.mktemp("cluster") / "bad-rows.csv"
    try:
        options = Options(
            url=cluster_urls, alias=alias, shards=2, replicas=1, bad_rows_file=bad_rows
        )
        report = run(SAMPLE, es, options, Progress())
        assert report.live
        yield alias
    finally:
        for info in elastic.list_indices(es, alias):
            elastic.delete_release(es, info.name)
        es.close()


def _copies(urls: str, index: str) -> Counter[tuple[str, str]]:
    """How many started copies of `index` each node holds, by primary (p) or replica (r)."""
    es = elastic.connect(urls)
    try:
        rows = es.cat.shards(index=index, format="json", h="prirep,state,node").body
    finally:
        es.close()
    return Counter((row["node"], row["prirep"]) for row in rows if row["state"] == "STARTED")


def test_release_has_shards_and_replicas_on_both_nodes(
    cluster_urls: str, cluster_alias: str
) -> None:
    es = elastic.connect(cluster_urls)
    try:
        index = elastic.alias_targets(es, cluster_alias)[-1]
        assert es.cluster.health(index=index)["status"] == "green"
    finally:
        es.close()
    copies = _copies(cluster_urls, index)
    assert sum(copies.values()) == 4, copies
    assert {node for node, _ in copies} == {"node-1", "node-2"}
    # The reference catalog is small and copied to every node (auto-expanded replicas).
    assert sum(_copies(cluster_urls, f"{index}-ref").values()) == 2


def test_indexer_cli_takes_node_list_shards_and_replicas_from_environment(
    cluster_urls: str, tmp_path: Path
) -> None:
    alias = f"test-cluster-cli-{uuid.uuid4().hex[:8]}"
    env = {"ELASTICSEARCH_URL": cluster_urls, "INDEX_SHARDS": "3", "INDEX_REPLICAS": "1"}
    done = subprocess.run(
        [str(Path(".venv/bin/indexer").resolve()), "load", str(SAMPLE), "--alias", alias,
         "--no-records", "--bad-rows", str(tmp_path / "bad.csv")],
        env={**os.environ, **env}, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    es = elastic.connect(cluster_urls)
    try:
        assert done.returncode == 0, done.stderr[-3000:]
        index = elastic.alias_targets(es, alias)[-1]
        copies = _copies(cluster_urls, index)
        assert sum(copies.values()) == 6, copies
        assert copies[("node-1", "p")] + copies[("node-2", "p")] == 3
    finally:
        for info in elastic.list_indices(es, alias):
            elastic.delete_release(es, info.name)
        es.close()


def test_data_node_killed_under_reads_none_fails_status_yellow_then_rejoins(
    cluster_urls: str, cluster_alias: str, make_key: MakeKey
) -> None:
    cnpjs, words = sample_reads(cluster_urls, cluster_alias)
    env = {"ELASTICSEARCH_URL": cluster_urls, "FAST_LOOKUPS": "false"}
    with serving(cluster_alias, env=env) as server:
        report = asyncio.run(
            drive(server.url, make_key().key, cnpjs, words, rate=40, before=3, down=6, after=3)
        )
    assert list(report.phases) == ["before", "node down", "rejoining", "after"]
    for name, phase in report.phases.items():
        assert phase.sent > 0, name
        assert phase.answered == phase.sent, (name, phase.outcomes, report.failures)
    assert report.failed_reads == 0
    assert report.seconds_to_yellow is not None, report.status_seen
    assert any(seen.startswith("up: cluster yellow: 1 node,") for seen in report.status_seen)
    assert report.seconds_to_rejoin is not None, report.status_seen
    assert report.status_seen[-1] == "up: cluster green"
