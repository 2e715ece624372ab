"""Elasticsearch failing answers every feature with the same JSON 503 and `Retry-After`: one
mapping (`app.errors.elastic_failure`), whatever the client raised (a transport error or an
API error such as a closed index or a refused query)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import pytest
from aiohttp import web
from elasticsearch import Elasticsearch

from app.errors import CATALOG_UNAVAILABLE
from app.mcp import protocol
from app.mcp.resources import RESOURCES
from tests.conftest import SERPRO, Server, serving, stored
from tests.loopback import LoopbackApp
from tests.mcp.conftest import rpc

FEATURES = [
    ("GET", f"/v1/cnpj/{SERPRO}", None),
    ("GET", f"/v1/cnpj/contato/{SERPRO}", None),
    ("GET", f"/v1/sintegra/{SERPRO}", None),
    ("GET", f"/v1/socios/{SERPRO}", None),
    ("GET", "/v1/socios/relacionados?nome=maria", None),
    ("GET", "/v1/search?q=serpro", None),
    ("GET", "/v1/seek?uf=DF", None),
    ("GET", "/v1/nome?nome=serpro", None),
    ("GET", "/v1/seek/cidades?municipio=9701&categoria=restaurantes", None),
    ("GET", "/v1/search/cnae?query=padaria", None),
    ("GET", "/v1/search/cidade?query=brasilia", None),
    ("POST", "/v1/cnpj/lote", [SERPRO]),
]


def assert_unavailable(server: Server, method: str, path: str, body: object) -> None:
    with server.client() as client:
        response = client.request(method, path, json=body)
    assert response.status_code == 503, (path, response.text)
    assert response.json()["error"] == "Service Unavailable"
    assert int(response.headers["Retry-After"]) > 0


@pytest.fixture(scope="module")
def closed(es: Elasticsearch, peer_alias: str) -> Iterator[Server]:
    """An alias (and catalog alias) whose indices are closed: every search is an API error."""
    alias = f"test-closed-{uuid.uuid4().hex[:8]}"
    index, catalog = f"{alias}-00000000000000000001", f"{alias}-00000000000000000001-ref"
    for name, target in ((index, alias), (catalog, f"{alias}-ref")):
        es.indices.create(index=name, aliases={target: {}})
        es.indices.close(index=name)
    with serving(alias) as server:
        yield server
    es.indices.delete(index=[index, catalog])


@pytest.mark.parametrize(("method", "path", "body"), FEATURES)
def test_closed_index_every_feature_503(
    closed: Server, method: str, path: str, body: object
) -> None:
    assert_unavailable(closed, method, path, body)


@pytest.fixture(scope="module")
def refusing(es: Elasticsearch, peer_alias: str) -> Iterator[Server]:
    """A release where the record is found but the partners' related-company query is
    refused by Elasticsearch (`cnpj_basico` mapped as text: no collapse on it)."""
    alias = f"test-refusing-{uuid.uuid4().hex[:8]}"
    index = f"{alias}-00000000000000000001"
    es.indices.create(
        index=index,
        mappings={
            "dynamic": False,
            "properties": {"cnpj": {"type": "keyword"}, "cnpj_basico": {"type": "text"}},
        },
        aliases={alias: {}},
    )
    source = stored(es, peer_alias, SERPRO)
    assert source is not None
    assert source["socios"]
    es.index(index=index, document=source, refresh=True)
    with serving(alias) as server:
        yield server
    es.indices.delete(index=index)


def test_partners_api_error_503_lookup_still_served(refusing: Server) -> None:
    with refusing.client() as client:
        assert client.get(f"/v1/cnpj/{SERPRO}").status_code == 200
    assert_unavailable(refusing, "GET", f"/v1/socios/{SERPRO}", None)


@pytest.fixture(scope="module")
def shard_missing(es: Elasticsearch) -> Iterator[Server]:
    """A release of two shards of which one has no copy (one shard a node on this single-node
    cluster): searches over it find only half the release."""
    alias = f"test-halved-{uuid.uuid4().hex[:8]}"
    index = f"{alias}-00000000000000000001"
    es.indices.create(
        index=index,
        settings={
            "number_of_shards": 2,
            "number_of_replicas": 0,
            "routing.allocation.total_shards_per_node": 1,
        },
        mappings={"dynamic": False, "properties": {"cnpj": {"type": "keyword"}}},
        aliases={alias: {}},
        wait_for_active_shards="0",
    )
    try:
        with serving(alias) as server:
            yield server
    finally:
        es.indices.delete(index=index)


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [("GET", f"/v1/cnpj/{SERPRO}", None), ("POST", "/v1/cnpj/lote", [SERPRO])],
)
def test_lookup_with_a_shard_missing_is_503_not_unknown(
    shard_missing: Server, method: str, path: str, body: object
) -> None:
    """A CNPJ that may sit on the missing shard is not answered 404 (or left out of a batch as
    unknown): the release cannot be read whole, so 503 with `Retry-After`."""
    assert_unavailable(shard_missing, method, path, body)


def test_agent_resources_of_no_release_read_while_the_catalog_fails(closed: Server) -> None:
    with closed.client() as client:
        docs = rpc(client, "resources/read", {"uri": "service://docs"})
        ufs = rpc(client, "resources/read", {"uri": "service://ufs"})
        cnaes = rpc(client, "resources/read", {"uri": "service://cnaes"})
        cities = rpc(client, "resources/read", {"uri": "service://municipios/SP"})
        listed = rpc(client, "resources/list")
    assert "Autenticação" in docs.json()["result"]["contents"][0]["text"]
    assert '"SP"' in ufs.json()["result"]["contents"][0]["text"]
    for failed in (cnaes, cities):
        assert failed.status_code == 503
        error = failed.json()["error"]
        assert error["code"] == protocol.UNAVAILABLE
        assert error["message"] == CATALOG_UNAVAILABLE
    entries = {entry["uri"]: entry for entry in listed.json()["result"]["resources"]}
    assert len(entries) == len(RESOURCES)
    sized = {uri for uri, entry in entries.items() if "size" in entry}
    assert sized == {"service://docs", "service://exemplos", "service://ufs"}


def test_agent_docs_and_ufs_read_with_elasticsearch_unreachable(peer_alias: str) -> None:
    server = Server(peer_alias, workers=1, env={"ELASTICSEARCH_URL": "http://127.0.0.1:1"})
    try:
        with server.client() as client:
            docs = rpc(client, "resources/read", {"uri": "service://docs"})
            ufs = rpc(client, "resources/read", {"uri": "service://ufs"})
            cnaes = rpc(client, "resources/read", {"uri": "service://cnaes"})
            listed = rpc(client, "resources/list")
    finally:
        server.stop()
    assert docs.status_code == ufs.status_code == listed.status_code == 200
    assert "Autenticação" in docs.json()["result"]["contents"][0]["text"]
    assert cnaes.status_code == 503
    assert cnaes.json()["error"]["message"] == CATALOG_UNAVAILABLE
    assert len(listed.json()["result"]["resources"]) == len(RESOURCES)


class HungCluster(LoopbackApp):
    """Takes every request and answers none (a cluster that hangs), noting each path."""

    def __init__(self) -> None:
        super().__init__()
        self.paths: list[str] = []

    def routes(self, app: web.Application) -> None:
        app.router.add_route("*", "/{tail:.*}", self._hang)

    async def _hang(self, request: web.Request) -> web.StreamResponse:
        self.paths.append(request.path)
        await asyncio.sleep(120)
        return web.Response()


def test_agent_resource_list_waits_for_a_hung_catalog_once(peer_alias: str) -> None:
    """The catalog's resources are listed without their size after the first of them finds
    the cluster hung: one wait of `REQUEST_TIMEOUT`, not one per resource."""
    hung = HungCluster()
    hung.start()
    server = Server(
        peer_alias, workers=1,
        env={"ELASTICSEARCH_URL": f"http://127.0.0.1:{hung.port}", "REQUEST_TIMEOUT": "1"},
    )  # fmt: skip
    try:
        with server.client(timeout=30) as client:
            before = len(hung.paths)
            listed = rpc(client, "resources/list")
            asked = hung.paths[before:]
    finally:
        server.stop()
        hung.stop()
    assert listed.status_code == 200
    entries = listed.json()["result"]["resources"]
    assert len(entries) == len(RESOURCES)
    assert {e["uri"] for e in entries if "size" in e} == {
        "service://docs", "service://exemplos", "service://ufs",
    }  # fmt: skip
    catalog = [path for path in asked if "-ref" in path]
    assert len(catalog) == 1, asked
