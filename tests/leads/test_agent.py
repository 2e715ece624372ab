"""An agent drives the whole lead sequence with the official MCP SDK client: plan, count,
preview, a lot refused without the LGPD confirmation, the lot, its status, and the download
with the same key; and a Starter account is told its plan has no lots."""

from __future__ import annotations

import asyncio
import csv
import io
import json
from typing import Any
from urllib.parse import urlsplit

import httpx
from mcp.types import TextContent

from tests.conftest import Issued, MakeKey, Server
from tests.leads.release import RESTAURANT
from tests.mcp.conftest import session
from tests.peers import Worker


def _text(result: Any) -> str:
    content = result.content[0]
    assert isinstance(content, TextContent)
    return content.text


def _data(result: Any) -> dict[str, Any]:
    assert result.is_error is False, result.content
    found: dict[str, Any] = result.structured_content
    assert json.loads(_text(result)) == found
    return found


def test_agent_plans_counts_previews_and_downloads_a_lot(
    leads_server: Server, paid_key: Issued, worker: Worker
) -> None:
    async def scenario() -> tuple[dict[str, Any], list[str], dict[str, Any]]:
        async with session(leads_server.url, paid_key.key) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert {"planejar_leads_quentes", "criar_lote_leads", "consultar_lote_leads"} <= names
            plan = _data(await client.call_tool("planejar_leads_quentes", {
                "objetivo": "Vendo software de gestão para restaurantes no Paraná",
                "exigir_email": True, "quantidade_desejada": 50,
            }))  # fmt: skip
            arguments = plan["argumentos"]
            assert arguments["uf"] == "PR"
            assert RESTAURANT in arguments["cnae"].split(",")
            counted = _data(await client.call_tool("contar_leads_quentes", arguments))
            assert counted["total"] == plan["total"] > 0
            preview = _data(
                await client.call_tool("prever_leads_quentes", {**arguments, "limit": 3})
            )
            assert all("***@" in lead["contatos"]["emails"][0] for lead in preview["data"])
            ranked = _data(
                await client.call_tool("gerar_leads_quentes", {**arguments, "limit": 20})
            )
            refused = await client.call_tool("criar_lote_leads", {**arguments, "quantidade": 20})
            assert refused.is_error is True
            assert "confirmar_lgpd" in _text(refused)
            asked = {**arguments, "quantidade": 20, "formato": "csv", "confirmar_lgpd": True,
                     "uso_responsavel": True, "chave_idempotencia": paid_key.key_id}  # fmt: skip
            created = _data(await client.call_tool("criar_lote_leads", asked))
            lote_id = created["lote"]["id"]
            retried = _data(await client.call_tool("criar_lote_leads", asked))  # a retried call
            assert (retried["lote"]["id"], retried["repetido"]) == (lote_id, True)
            status = created["lote"]
            for _ in range(300):
                status = _data(await client.call_tool("consultar_lote_leads", {"id": lote_id}))
                if status["estado"] == "concluido":
                    break
                await asyncio.sleep(0.1)
            cnpjs = [lead["empresa"]["cnpj"] for lead in ranked["data"]]
            return status, cnpjs, counted

    status, cnpjs, counted = asyncio.run(scenario())
    assert status["estado"] == "concluido"
    assert status["linhas"] == min(20, counted["total"])
    # The address is the operator's PUBLIC_URL; the test server listens on a port of its own.
    address = leads_server.url + urlsplit(status["download_url"]).path
    file = httpx.get(address, headers=paid_key.headers, timeout=10)
    assert file.status_code == 200
    rows = list(csv.reader(io.StringIO(file.content.decode("utf-8-sig")), delimiter=";"))
    assert [row[2] for row in rows[1:]] == cnpjs[: status["linhas"]]
    assert httpx.get(address, timeout=10).status_code == 401


def test_agent_on_a_free_plan_is_told_to_use_the_free_export(
    leads_server: Server, make_key: MakeKey
) -> None:
    key = make_key("starter")

    async def scenario() -> Any:
        async with session(leads_server.url, key.key) as client:
            return await client.call_tool("criar_lote_leads", {
                "cnae": RESTAURANT, "uf": "PR", "quantidade": 10, "confirmar_lgpd": True,
                "uso_responsavel": True,
            })  # fmt: skip

    result = asyncio.run(scenario())
    assert result.is_error is True
    text = _text(result)
    assert "criar_lote_leads" in text
    assert "exportar_leads_gratis" in text
