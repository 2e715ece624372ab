"""`compose.yaml`: every setting given to the app's containers is one the app reads, with a value
it accepts, in both layouts (one node; profile `cluster`, two nodes and two app replicas)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml

from app.lib.elastic import nodes
from app.settings import Settings

COMPOSE = Path(__file__).resolve().parent.parent / "compose.yaml"
INDEXER = {"INDEX_SHARDS", "INDEX_REPLICAS"}
"""Settings of the indexer CLI (`indexer load --shards/--replicas`)."""


def _services() -> dict[str, Any]:
    services: dict[str, Any] = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))["services"]
    return services


@pytest.mark.parametrize(
    "name", [name for name, service in _services().items() if service.get("build") == "."]
)
def test_app_containers_settings_are_read_and_valid(name: str) -> None:
    environment = _services()[name]["environment"]
    fields = {field.upper() for field in Settings.__struct_fields__}
    unknown = set(environment) - fields - INDEXER
    assert not unknown, unknown
    values = {
        key.lower(): value
        for key, value in environment.items()
        if key in fields and "${" not in str(value)
    }
    settings = msgspec.convert(values, Settings, strict=False)
    assert all(node.startswith("http://") for node in nodes(settings.elasticsearch_url))


def test_cluster_profile_reads_both_nodes_with_replicas() -> None:
    services = _services()
    cluster = {name for name, found in services.items() if "cluster" in found.get("profiles", [])}
    assert {"es01", "es02", "app-cluster", "worker-cluster", "lb"} <= cluster
    app = services["app-cluster"]
    assert nodes(app["environment"]["ELASTICSEARCH_URL"]) == [
        "http://es01:9200",
        "http://es02:9200",
    ]
    assert int(app["environment"]["INDEX_REPLICAS"]) >= 1
    assert app["deploy"]["replicas"] >= 2
    roles = {name: services[name]["environment"]["node.roles"] for name in ("es01", "es02")}
    assert "master" in roles["es01"]
    assert "master" not in roles["es02"]
