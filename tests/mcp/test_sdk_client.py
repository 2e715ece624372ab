"""The official MCP Python SDK client, over HTTP with a Bearer key, uses everything the server
offers: it lists and calls every tool (checking each `structuredContent` against the tool's
`outputSchema`), reads every resource and template, gets every prompt and completes arguments."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from mcp.types import PromptReference, ResourceTemplateReference

from app.mcp import prompts, resources, tools
from tests.conftest import MakeKey, Server
from tests.mcp.conftest import NUMBERS, PARTNER, SAMPLE_CNPJ, session

CALLS: dict[str, dict[str, Any]] = {
    "consultar_cnpj": {"cnpj": SAMPLE_CNPJ},
    "buscar_empresas": {"nome": "ione aparecida", "uf": "PR"},
    "buscar_socios_relacionados": {"nome": PARTNER.lower(), "limit": 2},
    "descobrir_segmentos_cnae": {"termo": "padaria"},
    "buscar_empresas_por_regiao_cnae": {"cnae": "5611", "uf": "PR", "cidade": "Curitiba"},
    "encontrar_empresas_relacionadas": {"kind": "telefone", "value": NUMBERS[0]},
    "encontrar_empresas_similares": {"cnpj": SAMPLE_CNPJ, "escopo": "brasil", "limit": 3},
    "mapear_mercado_empresas": {"segmento": "padaria", "limit": 3},
    "planejar_leads_quentes": {"objetivo": "cardápio digital para restaurantes em Curitiba, PR"},
    "contar_leads_quentes": {"cnae": "5611201", "uf": "PR"},
    "prever_leads_quentes": {"cnae": "5611201", "uf": "PR", "limit": 3},
    "gerar_leads_quentes": {"cnae": "5611201", "uf": "PR", "limit": 2},
    "prospectar_empresas_com_ia": {"objetivo": "vendo uniformes para restaurantes no PR"},
    "exportar_leads_gratis": {"cnae": "5611201", "uf": "PR", "quantidade": 3},
}
LOT_TOOLS = {"criar_lote_leads", "consultar_lote_leads"}
"""Called by the lead tests (`tests/leads/test_agent.py`), on an account with a paid plan."""


def test_sdk_lists_and_calls_every_tool(mcp_server: Server, make_key: MakeKey) -> None:
    key = make_key().key

    async def scenario() -> dict[str, Any]:
        async with session(mcp_server.url, key) as client:
            listed = await client.list_tools()
            assert sorted(t.name for t in listed.tools) == sorted(tools.BY_NAME)
            assert set(CALLS) | LOT_TOOLS == set(tools.BY_NAME)
            for tool in listed.tools:
                assert tool.description
                assert tool.annotations is not None
                assert tool.annotations.read_only_hint is tools.BY_NAME[tool.name].read_only
                assert tool.annotations.open_world_hint is False
                assert tool.output_schema is not None
                assert tool.input_schema["type"] == "object"
            results = {}
            for name, arguments in CALLS.items():
                # The SDK validates structured_content against the outputSchema it listed.
                result = await client.call_tool(name, arguments)
                assert result.is_error is False, (name, result.content)
                assert result.structured_content is not None
                assert json.loads(result.content[0].text) == result.structured_content
                results[name] = result.structured_content
            return results

    results = asyncio.run(scenario())
    assert results["consultar_cnpj"]["cnpj"] == SAMPLE_CNPJ
    assert SAMPLE_CNPJ in [item["cnpj"] for item in results["buscar_empresas"]["data"]]
    partners = results["buscar_socios_relacionados"]
    assert partners["total"] == 3
    assert partners["next_cursor"]
    assert {s["nome"] for item in partners["data"] for s in item["socios"]} == {PARTNER}
    segments = results["descobrir_segmentos_cnae"]["data"]
    assert segments[0]["codigo"].startswith("472")
    assert all(s["ativas"] <= s["empresas"] for s in segments)
    region = results["buscar_empresas_por_regiao_cnae"]["data"]
    assert {item["cnpj"] for item in region} >= set(NUMBERS)
    related = results["encontrar_empresas_relacionadas"]
    assert {item["cnpj"] for item in related["data"]} == set(NUMBERS[1:])
    assert all(item["em_comum"] == ["(41) 33334444"] for item in related["data"])
    similar = results["encontrar_empresas_similares"]
    assert similar["origem"]["cnpj"] == SAMPLE_CNPJ
    assert all(item["motivos"][0].startswith("mesma classe CNAE") for item in similar["data"])
    market = results["mapear_mercado_empresas"]
    assert market["total"] == sum(uf["total"] for uf in market["por_uf"])
    restaurants = {item["cnpj"] for item in region if item["cnae_principal"] == "5611201"}
    assert results["contar_leads_quentes"]["total"] >= len(restaurants) >= 3
    plan = results["planejar_leads_quentes"]
    assert "restaurantes" in [segment["segmento"] for segment in plan["segmentos"]]
    assert plan["argumentos"]["uf"] == "PR"
    ranked = results["gerar_leads_quentes"]["data"]
    preview = results["prever_leads_quentes"]["data"]
    assert [lead["empresa"]["cnpj"] for lead in preview[:2]] == [
        lead["empresa"]["cnpj"] for lead in ranked
    ]
    assert results["prospectar_empresas_com_ia"]["amostra"]
    exported = results["exportar_leads_gratis"]
    assert exported["linhas"] == 3
    assert exported["csv"].splitlines()[1].split(";")[2] == ranked[0]["empresa"]["cnpj"]


def test_sdk_reads_every_resource_and_template(mcp_server: Server) -> None:
    async def scenario() -> tuple[dict[str, str], list[Any], dict[str, str]]:
        async with session(mcp_server.url) as client:  # no key: discovery is open
            listed = await client.list_resources()
            read = {}
            for item in listed.resources:
                assert item.mime_type
                assert item.size
                assert item.description
                content = (await client.read_resource(item.uri)).contents[0]
                assert len(content.text.encode()) == item.size
                read[str(item.uri)] = content.text
            templates = (await client.list_resource_templates()).resource_templates
            filled = {
                "service://municipios/PR": (await client.read_resource("service://municipios/PR"))
                .contents[0]
                .text,
                "service://cnaes/4721": (await client.read_resource("service://cnaes/4721"))
                .contents[0]
                .text,
            }
            return read, templates, filled

    read, templates, filled = asyncio.run(scenario())
    assert sorted(read) == sorted(r.uri for r in resources.RESOURCES)
    cnaes = json.loads(read["service://cnaes"])
    subclasses = [
        s
        for sec in cnaes["secoes"]
        for d in sec["divisoes"]
        for g in d["grupos"]
        for c in g["classes"]
        for s in c["subclasses"]
    ]
    assert len(subclasses) > 1000
    assert all(
        s["codigo"].startswith(c["codigo"])
        for sec in cnaes["secoes"]
        for d in sec["divisoes"]
        for g in d["grupos"]
        for c in g["classes"]
        for s in c["subclasses"]
    )
    ufs = json.loads(read["service://ufs"])["data"]
    assert len(ufs) == 27
    assert {
        "sigla": "SP",
        "nome": "São Paulo",
        "nome_normalizado": "sao paulo",
        "codigo_ibge": "35",
    } in ufs
    cities = json.loads(read["service://municipios"])["data"]
    assert len(cities) > 5000
    uf_codes = {u["sigla"]: u["codigo_ibge"] for u in ufs}
    known = [c for c in cities if c["codigo_ibge"] and c["uf"] in uf_codes]
    assert len(known) > 5000
    assert all(c["codigo_ibge"][:2] == uf_codes[c["uf"]] for c in known)
    for uri in (
        "service://naturezas-juridicas",
        "service://qualificacoes-socios",
        "service://paises",
    ):
        assert len(json.loads(read[uri])["data"]) > 20, uri
    assert "Authorization: Bearer" in read["service://docs"]
    assert "tools/call" in read["service://exemplos"]
    assert {t.uri_template for t in templates} == {t.uri_template for t in resources.TEMPLATES}
    parana = json.loads(filled["service://municipios/PR"])["data"]
    assert "Curitiba" in [c["nome"] for c in parana]
    assert all(c["uf"] == "PR" for c in parana)
    assert all(
        c["codigo"].startswith("4721") for c in json.loads(filled["service://cnaes/4721"])["data"]
    )


def test_sdk_gets_every_prompt_and_completes_arguments(mcp_server: Server) -> None:
    async def scenario() -> tuple[list[Any], dict[str, str], dict[str, list[str]]]:
        async with session(mcp_server.url) as client:
            listed = (await client.list_prompts()).prompts
            texts = {}
            for prompt in listed:
                typed = {"uf": "SP", "cnpj": SAMPLE_CNPJ, "escopo": "uf"}  # values of a shape
                values = {a.name: typed.get(a.name, "padaria") for a in prompt.arguments or []}
                got = await client.get_prompt(prompt.name, values)
                texts[prompt.name] = got.messages[0].content.text
            completions = {
                "uf": (
                    await client.complete(
                        PromptReference(name="analisar_mercado"), {"name": "uf", "value": "p"}
                    )
                ).completion.values,
                "segmento": (
                    await client.complete(
                        PromptReference(name="analisar_mercado"),
                        {"name": "segmento", "value": "padar"},
                    )
                ).completion.values,
                "cidade": (
                    await client.complete(
                        PromptReference(name="encontrar_fornecedores"),
                        {"name": "cidade", "value": "curit"},
                    )
                ).completion.values,
                "template-uf": (
                    await client.complete(
                        ResourceTemplateReference(uri="service://municipios/{uf}"),
                        {"name": "uf", "value": "s"},
                    )
                ).completion.values,
                "template-cnae": (
                    await client.complete(
                        ResourceTemplateReference(uri="service://cnaes/{codigo}"),
                        {"name": "codigo", "value": "4721"},
                    )
                ).completion.values,
                "template-section": (
                    await client.complete(
                        ResourceTemplateReference(uri="service://cnaes/{codigo}"),
                        {"name": "codigo", "value": "i"},
                    )
                ).completion.values,
                "template-uf-nothing": (
                    await client.complete(
                        ResourceTemplateReference(uri="service://municipios/{uf}"),
                        {"name": "uf", "value": "\x00"},
                    )
                ).completion.values,
            }
            return listed, texts, completions

    listed, texts, completions = asyncio.run(scenario())
    assert sorted(p.name for p in listed) == sorted(prompts.BY_NAME)
    assert all(p.description and p.arguments is not None for p in listed)
    for name, text in texts.items():
        assert any(given in text for given in ("padaria", "SP", SAMPLE_CNPJ)), name
        assert any(tool in text for tool in tools.BY_NAME), name
    assert completions["uf"] == ["PA", "PB", "PE", "PI", "PR"]
    assert any("Padaria" in value for value in completions["segmento"])
    assert completions["cidade"][0] == "Curitiba"
    assert set(completions["template-uf"]) == {"SC", "SE", "SP"}
    assert completions["template-cnae"][0].startswith("4721-")
    assert completions["template-section"] == ["I"]  # a section, as the template reads it
    assert completions["template-uf-nothing"] == []
