"""Tool calls draw on the account's window with REST, carry the limit headers, count in the
usage counters by their cost, and write an audit row naming the tool; discovery is free."""

from __future__ import annotations

import secrets
import time
from typing import Any

import httpx

from app.mcp.server import COMPLETION_LIMIT, DISCOVERY_LIMIT
from tests.conftest import Issued, MakeKey, Server, another_key
from tests.mcp.conftest import SAMPLE_CNPJ, rpc

CALL = {"name": "consultar_cnpj", "arguments": {"cnpj": SAMPLE_CNPJ}}


def _audit(server: Server, admin: Issued, key: Issued, expected: int) -> list[dict[str, Any]]:
    return _audit_of(server, admin, key.key_id, expected)


def _audit_of(server: Server, admin: Issued, key_id: str, expected: int) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 30
    with server.client(headers=admin.headers) as api:
        while True:
            rows: list[dict[str, Any]] = api.get(
                "/v1/admin/auditoria", params={"chave": key_id}
            ).json()["data"]
            if len(rows) >= expected or time.monotonic() > deadline:
                return rows
            time.sleep(0.1)


def test_starter_account_three_in_any_mix_of_rest_and_tools(
    mcp_server: Server, make_key: MakeKey
) -> None:
    first = make_key(plano="starter")
    second = another_key(first)
    with mcp_server.client(headers={}) as client:
        answers = [
            rpc(client, "tools/call", CALL, Authorization=f"Bearer {first.key}"),
            client.get(f"/v1/cnpj/{SAMPLE_CNPJ}", headers=second.headers),
            rpc(client, "tools/call", CALL, Authorization=f"Bearer {second.key}"),
        ]
        assert [a.status_code for a in answers] == [200, 200, 200]
        assert [a.headers["X-RateLimit-Remaining"] for a in answers] == ["2", "1", "0"]
        assert all(a.headers["X-RateLimit-Limit"] == "3" for a in answers)
        refused_tool = rpc(
            client, "tools/call", CALL, request_id=99, Authorization=f"Bearer {first.key}"
        )
        refused_rest = client.get(f"/v1/cnpj/{SAMPLE_CNPJ}", headers=first.headers)
        # Discovery is not metered: it never eats the window nor is refused by it.
        listed = rpc(client, "tools/list", Authorization=f"Bearer {first.key}")
    assert refused_tool.status_code == 429
    body = refused_tool.json()
    assert body["id"] == 99
    assert body["error"]["code"] == -32029
    assert int(refused_tool.headers["Retry-After"]) >= 1
    assert refused_tool.headers["X-RateLimit-Remaining"] == "0"
    assert refused_rest.status_code == 429
    assert listed.status_code == 200
    assert "X-RateLimit-Limit" not in listed.headers


def test_tool_calls_audited_and_metered_by_cost(mcp_server: Server, make_key: MakeKey) -> None:
    key, admin = make_key(), make_key(papel="admin")
    calls = [
        CALL,
        {"name": "buscar_empresas", "arguments": {"nome": "ione", "uf": "PR"}},
        {"name": "mapear_mercado_empresas", "arguments": {"segmento": "padaria"}},
        {"name": "consultar_cnpj", "arguments": {"cnpj": "00000000000191"}},  # not found
    ]
    with mcp_server.client(headers={**key.headers, "User-Agent": "agente-teste/1"}) as client:
        for call in calls:
            assert rpc(client, "tools/call", call).status_code == 200
        rpc(client, "tools/list")  # discovery: not audited
    rows = _audit(mcp_server, admin, key, 4)
    assert [(r["operacao"], r["status"]) for r in rows] == [
        ("consultar_cnpj", 404),
        ("mapear_mercado_empresas", 200),
        ("buscar_empresas", 200),
        ("consultar_cnpj", 200),
    ]
    assert {r["rota"] for r in rows} == {"/mcp"}
    assert {r["user_agent"] for r in rows} == {"agente-teste/1"}
    assert {r["ip"] for r in rows} == {"127.0.0.1"}
    with mcp_server.client(headers=key.headers) as client:
        usage = client.get("/v1/me/uso").json()["data"]
    assert [(u["consultas"], u["buscas"], u["analises"]) for u in usage] == [(2, 1, 1)]
    with mcp_server.client(headers=admin.headers) as api:
        by_tool = api.get(
            "/v1/admin/auditoria", params={"chave": key.key_id, "operacao": "consultar_cnpj"}
        ).json()
    assert by_tool["total"] == 2


def test_rest_calls_audited_with_their_operation(mcp_server: Server, make_key: MakeKey) -> None:
    key, admin = make_key(), make_key(papel="admin")
    with mcp_server.client(headers=key.headers) as client:
        client.get(f"/v1/cnpj/{SAMPLE_CNPJ}")
        client.get("/v1/search", params={"q": "ione"})
        client.get("/v1/me/chaves")
    rows = _audit(mcp_server, admin, key, 3)
    assert [(r["rota"], r["operacao"]) for r in rows] == [
        ("/v1/me/chaves", None),
        ("/v1/search", "busca"),
        ("/v1/cnpj/{cnpj}", "consultar_cnpj"),
    ]


def test_revoked_key_refused_on_every_method(mcp_server: Server, make_key: MakeKey) -> None:
    owner = make_key()
    with mcp_server.client(headers=owner.headers) as client:
        created = client.post("/v1/me/chaves", json={"rotulo": "agente"}).json()
        client.delete(f"/v1/me/chaves/{created['chave']['id']}")
        revoked = {"Authorization": f"Bearer {created['api_key']}"}
        for method in ("initialize", "tools/list", "tools/call"):
            response = client.post(
                "/mcp",
                json={"jsonrpc": "2.0", "id": 1, "method": method, "params": CALL},
                headers=revoked,
            )
            assert response.status_code == 401, method
            assert response.json()["error"]["code"] == -32040
        notified = client.post(
            "/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"},
            headers=revoked,
        )  # fmt: skip
        assert notified.status_code == 401  # not 202: a wrong key is never ignored
        assert notified.json()["error"]["code"] == -32040


def test_allowlisted_key_from_elsewhere_403(mcp_server: Server, make_key: MakeKey) -> None:
    owner = make_key()
    with mcp_server.client(headers=owner.headers) as client:
        created = client.post(
            "/v1/me/chaves", json={"rotulo": "agente", "allowlist": ["10.0.0.0/8"]}
        ).json()
    with httpx.Client(base_url=mcp_server.url, timeout=10) as client:
        response = rpc(client, "tools/call", CALL, Authorization=f"Bearer {created['api_key']}")
    assert response.status_code == 403
    assert response.json()["error"]["code"] == -32043


def test_refused_known_keys_are_audited_under_them_as_on_rest(
    mcp_server: Server, make_key: MakeKey
) -> None:
    """A key outside its allowlist (403) or revoked (401) is refused on the agent interface
    as on REST, and the refusal is in the audit log under the key, alone or in a batch."""
    owner, admin = make_key(), make_key(papel="admin")
    with mcp_server.client(headers=owner.headers) as client:
        fence = {"rotulo": "cerca", "allowlist": ["10.9.9.9"]}
        fenced = client.post("/v1/me/chaves", json=fence).json()
        revoked = client.post("/v1/me/chaves", json={"rotulo": "velha"}).json()
        client.delete(f"/v1/me/chaves/{revoked['chave']['id']}")
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": CALL}
    with httpx.Client(base_url=mcp_server.url, timeout=10) as client:
        for created, status in ((fenced, 403), (revoked, 401)):
            sent = {"Authorization": f"Bearer {created['api_key']}"}
            assert client.post("/mcp", json=call, headers=sent).status_code == status
            assert client.post("/mcp", json=[call, call], headers=sent).status_code == status
    for created, status in ((fenced, 403), (revoked, 401)):
        key = created["chave"]["id"]
        rows = _audit_of(mcp_server, admin, key, 2)
        assert [(r["rota"], r["status"]) for r in rows] == [("/mcp", status)] * 2, rows


def test_completions_without_a_key_have_a_window_per_address(
    mcp_server: Server, make_key: MakeKey
) -> None:
    """The one discovery method that searches the index: without a key, `COMPLETION_LIMIT`
    a minute per address, then 429 in JSON-RPC; a key lifts it, other discovery is not drawn."""
    ref = {"type": "ref/prompt", "name": "analisar_mercado"}
    params = {"ref": ref, "argument": {"name": "segmento", "value": "padar"}}
    address = f"127.61.{secrets.randbelow(250)}.{secrets.randbelow(250) + 1}"
    with mcp_server.client(address, headers={}) as client:
        answered = [rpc(client, "completion/complete", params) for _ in range(COMPLETION_LIMIT)]
        refused = rpc(client, "completion/complete", params, request_id=7)
        listed = rpc(client, "tools/list")
        keyed = rpc(client, "completion/complete", params, **make_key().headers)
    assert {a.status_code for a in answered} == {200}
    assert answered[0].json()["result"]["completion"]["values"]
    assert answered[-1].headers["X-RateLimit-Remaining"] == "0"
    assert refused.status_code == 429
    assert refused.json()["id"] == 7
    assert refused.json()["error"]["code"] == -32029
    assert int(refused.headers["Retry-After"]) >= 1
    assert listed.status_code == 200
    assert keyed.status_code == 200
    assert "X-RateLimit-Limit" not in keyed.headers


def test_discovery_without_a_key_has_a_window_per_address(
    mcp_server: Server, make_key: MakeKey
) -> None:
    """Discovery is free, not unbounded: without a key, `DISCOVERY_LIMIT` requests a minute per
    address, whatever the method, then 429 in JSON-RPC with `Retry-After`; completions keep a
    window of their own, and a key lifts it."""
    address = f"127.62.{secrets.randbelow(250)}.{secrets.randbelow(250) + 1}"
    methods = ("tools/list", "ping", "resources/list", "prompts/list", "metodo/nenhum")
    with mcp_server.client(address, headers={}) as client:
        answered = [rpc(client, methods[n % len(methods)]) for n in range(DISCOVERY_LIMIT)]
        refused = rpc(client, "initialize", {}, request_id=9)
        ref = {"type": "ref/prompt", "name": "analisar_mercado"}
        completed = rpc(client, "completion/complete", {"ref": ref, "argument":
                        {"name": "segmento", "value": "padar"}})  # fmt: skip
        keyed = rpc(client, "tools/list", **make_key().headers)
    assert {a.status_code for a in answered} == {200}
    assert answered[-1].headers["X-RateLimit-Remaining"] == "0"
    assert refused.status_code == 429
    assert (refused.json()["id"], refused.json()["error"]["code"]) == (9, -32029)
    assert int(refused.headers["Retry-After"]) >= 1
    assert completed.status_code == 200
    assert keyed.status_code == 200


def test_batch_tool_calls_each_drawn_refused_and_audited_alone(
    mcp_server: Server, make_key: MakeKey
) -> None:
    """A batch is no way around the window: each tool call in it draws its unit, the ones past
    the window are refused in place (-32029, the answer carrying `Retry-After`), and each is
    audited and counted as it would be alone."""
    key, admin = make_key(plano="starter"), make_key(papel="admin")
    batch = [{"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": CALL} for n in range(5)]
    with mcp_server.client(headers=key.headers) as client:
        answer = client.post("/mcp", json=batch)
        assert answer.status_code == 200, answer.text
        replies = answer.json()
        usage = client.get("/v1/me/uso")
    assert [reply["id"] for reply in replies] == list(range(5))
    assert [reply["result"]["structuredContent"]["cnpj"] for reply in replies[:3]] == [
        SAMPLE_CNPJ
    ] * 3
    assert [reply["error"]["code"] for reply in replies[3:]] == [-32029, -32029]
    assert int(answer.headers["Retry-After"]) >= 1
    assert answer.headers["X-RateLimit-Remaining"] == "0"
    assert usage.status_code == 429  # the window is the account's, whatever the face
    rows = [row for row in _audit(mcp_server, admin, key, 6) if row["rota"] == "/mcp"]
    assert sorted((r["operacao"], r["status"]) for r in rows) == [
        *[("consultar_cnpj", 200)] * 3,
        *[("consultar_cnpj", 429)] * 2,
    ]


def test_batch_with_a_refused_key_refused_whole(mcp_server: Server, make_key: MakeKey) -> None:
    """A key that is refused fails every method, in a batch too: the batch gets the key's
    HTTP status and headers, as one message would, and no message of it runs."""
    owner = make_key()
    with mcp_server.client(headers=owner.headers) as client:
        created = client.post("/v1/me/chaves", json={"rotulo": "agente"}).json()
        client.delete(f"/v1/me/chaves/{created['chave']['id']}")
        batch = [{"jsonrpc": "2.0", "id": 1, "method": "ping"},
                 {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": CALL}]  # fmt: skip
        answer = client.post(
            "/mcp", json=batch, headers={"Authorization": f"Bearer {created['api_key']}"}
        )
    assert answer.status_code == 401, answer.text
    assert answer.headers["WWW-Authenticate"] == "Bearer"
    body = answer.json()
    assert (body["id"], body["error"]["code"]) == (None, -32040)


def test_a_key_sent_in_the_wrong_place_is_never_echoed(
    mcp_server: Server, make_key: MakeKey
) -> None:
    """A key pasted where a name or a value goes is never answered back: in the URL (a query
    parameter's name or value) it is a misplaced key, 401; in a JSON-RPC method or a tool's
    argument it is refused as that input is, and the refusal shows only its public id."""
    key = make_key()
    secret = key.key.rsplit("_", 1)[1]
    masked = f"cnpj_{key.key_id}_***"
    with mcp_server.client(headers=key.headers) as client:
        answers = [
            client.get(f"/v1/cnpj/{SAMPLE_CNPJ}", params={key.key: "1"}),
            client.get("/v1/search", params={"q": "ione", "uf": key.key}),
            rpc(client, key.key),
            rpc(client, "tools/call", {"name": "consultar_cnpj", "arguments": {"cnpj": key.key}}),
            rpc(
                client,
                "tools/call",
                {"name": "consultar_cnpj", "arguments": {"cnpj": key.key[:40]}},
            ),
        ]
    for answer in answers:
        assert secret[:20] not in answer.text, answer.text  # the whole secret, or its start
    assert [a.status_code for a in answers[:2]] == [401, 401]  # in the URL: a misplaced key
    assert masked in answers[2].json()["error"]["message"]
    tool = answers[3].json()["result"]
    assert tool["isError"] is True
