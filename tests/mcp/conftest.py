"""The agent interface under test: the sample release plus three companies that share a
partner, a phone and an address, served by two workers; and the official MCP SDK client."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager

import httpx
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import ROOT, Loader, Server, serving
from tests.releases import cnpj_of, establishment, partner, rows

SAMPLE = ROOT / "fixtures" / "sample"
SAMPLE_CNPJ = "57815224000179"
PARTNER = "MARIA DE TESTE AGENTE"
SHARED_PHONE = ("41", "33334444")
SHARED_ADDRESS = ("80010000", "100")
ROOTS = ["99100001", "99100002", "99100003"]
NUMBERS = [cnpj_of(root) for root in ROOTS]


@pytest.fixture(scope="session")
def agent_alias(
    load: Loader, new_alias: Callable[[], str], tmp_path_factory: pytest.TempPathFactory
) -> str:
    release = tmp_path_factory.mktemp("agent") / "release"
    shutil.copytree(SAMPLE, release)
    (release / "EMPRECSV-agente.csv").write_bytes(
        rows(
            *(
                [root, f"RESTAURANTE AGENTE {n} LTDA", "2062", "49", "50000,00", "01", ""]
                for n, root in enumerate(ROOTS)
            )
        )
    )
    (release / "ESTABELE-agente.csv").write_bytes(
        rows(
            *(
                establishment(root, number, f"AGENTE {n}")
                for n, (root, number) in enumerate(zip(ROOTS, NUMBERS, strict=True))
            )
        )
    )
    shared = partner(PARTNER, "***123456**")
    (release / "SOCIOCSV-agente.csv").write_bytes(rows(*([root, *shared] for root in ROOTS)))
    alias = new_alias()
    load(release, alias)
    return alias


@pytest.fixture(scope="session")
def mcp_server(agent_alias: str) -> Iterator[Server]:
    with serving(agent_alias) as server:
        yield server


@asynccontextmanager
async def session(url: str, key: str | None = None) -> AsyncIterator[ClientSession]:
    """An initialised session of the official SDK client, with the Bearer key when given."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(10.0, read=30.0)) as http,
        streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write, read_timeout_seconds=30) as client,
    ):
        await client.initialize()
        yield client


def rpc(
    client: httpx.Client,
    method: str,
    params: dict[str, object] | None = None,
    request_id: int = 1,
    **headers: str,
) -> httpx.Response:
    """A raw JSON-RPC POST to /mcp."""
    body: dict[str, object] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        body["params"] = params
    return client.post("/mcp", json=body, headers=headers)
