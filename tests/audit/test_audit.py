"""Audit rows of authenticated calls: fields, no key material, filters and cursor paging,
usage counters, and no row lost on a clean shutdown."""

from __future__ import annotations

import asyncio
import logging
import time
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest
from psycopg_pool import AsyncConnectionPool

from app.audit.repository import WHERE, Entrada
from app.audit.writer import AuditWriter
from tests.conftest import Issued, MakeKey, Server, migrated

AUDIT = "/v1/admin/auditoria"


def _rows(server: Server, admin: Issued, expected: int, **params: Any) -> dict[str, Any]:
    """The listing once the background writer has caught up with `expected` rows; past 30 s,
    a failure that shows the server's log (where a stalled or failing writer says why)."""
    deadline = time.monotonic() + 30
    with server.client() as api:
        while True:
            body: dict[str, Any] = api.get(AUDIT, params=params, headers=admin.headers).json()
            if body["total"] >= expected:
                return body
            if time.monotonic() > deadline:
                pytest.fail(f"{body['total']} of {expected} audit rows after 30 s; server log:\n"
                            f"{server.log()[-6000:]}")  # fmt: skip
            time.sleep(0.1)


def test_audit_row_per_call_without_key(api_server: Server, make_key: MakeKey) -> None:
    caller, admin = make_key(), make_key(papel="admin")
    with api_server.client(headers={**caller.headers, "User-Agent": "audit-test/1"}) as client:
        calls = [client.get("/v1/cnpj/validar/11222333000181"), client.get("/v1/cnpj/123"),
                 client.get("/v1/me/chaves"), client.get("/v1/admin/auditoria")]  # fmt: skip
    assert [c.status_code for c in calls] == [200, 400, 200, 403]
    body = _rows(api_server, admin, 4, chave=caller.key_id)
    assert body["total"] == 4
    rows = body["data"]
    assert [r["status"] for r in rows] == [403, 200, 400, 200]  # newest first
    assert rows[-1]["rota"] == "/v1/cnpj/validar/{cnpj}"
    assert rows[-1]["caminho"] == "/v1/cnpj/validar/11222333000181"
    assert {r["chave_id"] for r in rows} == {caller.key_id}
    assert {r["ip"] for r in rows} == {"127.0.0.1"}
    assert {r["user_agent"] for r in rows} == {"audit-test/1"}
    assert caller.key not in str(body)
    assert caller.key.split("_", 2)[-1] not in str(body)


def test_audit_filters_and_cursor_paging(api_server: Server, make_key: MakeKey) -> None:
    caller, admin = make_key(), make_key(papel="admin")
    with api_server.client(headers=caller.headers) as client:
        for number in range(7):
            client.get(f"/v1/cnpj/validar/1122233300018{number}")
        client.get("/v1/me/chaves")
    with api_server.client() as api:
        assert _rows(api_server, admin, 8, chave=caller.key_id)["total"] == 8
        seen: list[int] = []
        params: dict[str, Any] = {"chave": caller.key_id, "limit": 3}
        while True:
            page = api.get(AUDIT, params=params, headers=admin.headers).json()
            seen += [row["id"] for row in page["data"]]
            assert page["total"] == 8
            if page["next_cursor"] is None:
                break
            params["cursor"] = page["next_cursor"]
        assert len(seen) == 8
        assert seen == sorted(seen, reverse=True)
        by_route = api.get(AUDIT, params={"chave": caller.key_id, "rota": "/v1/me/chaves"},
                           headers=admin.headers).json()  # fmt: skip
        assert by_route["total"] == 1
        by_status = api.get(AUDIT, params={"chave": caller.key_id, "status": 404},
                            headers=admin.headers).json()  # fmt: skip
        assert by_status["total"] == 0
        future = api.get(AUDIT, params={"chave": caller.key_id, "desde": "2999-01-01T00:00:00Z"},
                         headers=admin.headers).json()  # fmt: skip
        assert future["total"] == 0
        for bad in ({"cursor": "%%%"}, {"limit": 0}, {"limit": 501}, {"desde": "ontem"},
                    {"status": "x"}, {"limit": ""}, {"chave": "k" * 65}):  # fmt: skip
            refused = api.get(AUDIT, params=bad, headers=admin.headers)
            assert refused.status_code == 400, refused.text
            [field] = bad
            assert refused.json()["details"]["campo"] == field, refused.text
            wording = "cursor inválido" if field == "cursor" else f"Valor inválido em {field}: "
            assert refused.json()["message"].startswith(wording), refused.text
        status = api.get(AUDIT, params={"status": "x"}, headers=admin.headers).json()
        assert status["message"] == "Valor inválido em status: deve ser um número inteiro."


def test_audit_clean_shutdown_loses_no_row(
    peer_alias: str, make_key: MakeKey, database: str
) -> None:
    caller = make_key()
    server = Server(peer_alias, workers=2)
    try:
        with server.client(headers=caller.headers) as client:
            for _ in range(60):
                assert client.get("/v1/cnpj/33683111000280").status_code == 200
    finally:
        log = server.stop()
    assert "Traceback" not in log
    assert caller.key not in log
    with psycopg.connect(database) as conn:
        rows = conn.execute(
            "SELECT count(*) FROM auditoria WHERE chave_id = %s", (caller.key_id,)
        ).fetchone()
        usage = conn.execute(
            "SELECT sum(consultas), sum(buscas) FROM uso_chaves WHERE chave_id = %s",
            (caller.key_id,),
        ).fetchone()
        used = conn.execute(
            "SELECT ultimo_uso IS NOT NULL FROM chaves WHERE id = %s", (caller.key_id,)
        ).fetchone()
    assert rows == (60,)
    assert usage == (60, 0)
    assert used == (True,)


def test_audit_odd_path_and_agent_still_written(api_server: Server, make_key: MakeKey) -> None:
    caller, admin = make_key(), make_key(papel="admin")
    with api_server.client(headers={**caller.headers, "User-Agent": "x" * 600}) as client:
        status = client.get("/v1/cnpj/validar/%00%ff%c3").status_code
    body = _rows(api_server, admin, 1, chave=caller.key_id)
    assert body["total"] == 1
    assert body["data"][0]["status"] == status
    assert body["data"][0]["caminho"].startswith("/v1/cnpj/validar/\ufffd")
    assert body["data"][0]["user_agent"] == "x" * 512


def test_usage_counted_by_cost_per_key(api_server: Server, make_key: MakeKey) -> None:
    caller = make_key()
    with api_server.client(headers=caller.headers) as client:
        client.get("/v1/cnpj/33683111000280")
        client.get("/v1/cnpj/contato/33683111000280")
        client.get("/v1/search", params={"q": "serpro"})
        client.get("/v1/cnpj/validar/33683111000280")  # costs nothing
        assert client.get("/v1/cnpj/123").status_code == 400  # refusals cost nothing either
        assert client.get("/v1/search", params={"q": "!"}).status_code == 400
        assert client.get("/v1/cnpj/00000000000191").status_code == 404  # an answer: counted
        deadline = time.monotonic() + 30
        while True:
            usage = client.get("/v1/me/uso").json()
            counted = sum(u["consultas"] + u["buscas"] for u in usage["data"])
            if counted >= 4 or time.monotonic() > deadline:
                break
            time.sleep(0.1)
    assert usage["plano"] == "teste-alto-volume"
    assert [(u["chave_id"], u["consultas"], u["buscas"]) for u in usage["data"]] == [
        (caller.key_id, 3, 1)
    ]


def _entry(key_id: str, ip: str | None, status: int = 200) -> Entrada:
    return Entrada(
        chave_id=key_id, metodo="GET", rota="/v1/teste", caminho="/v1/teste", ip=ip,
        user_agent="writer-test", status=status, em=datetime.now(UTC), custo="consultas",
    )  # fmt: skip


def test_audit_writer_refused_batch_keeps_every_storable_row(
    make_key: MakeKey, database: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A row the database refuses (here an address no normalisation made) costs only itself:
    the batch is written again row by row, and the one lost row is logged and counted."""
    first, second = make_key(), make_key()
    rows = [_entry(first.key_id, "203.0.113.1") for _ in range(10)]
    rows.insert(4, _entry(second.key_id, "fe80::1%eth0"))
    rows += [_entry(second.key_id, "2001:db8::7") for _ in range(10)]

    async def run() -> AuditWriter:
        async with AsyncConnectionPool(
            database, min_size=1, max_size=2, kwargs={"autocommit": True}
        ) as pool:
            writer = AuditWriter(pool)
            writer.start()
            for row in rows:
                writer.record(row)
            await writer.close()
            return writer

    with caplog.at_level(logging.WARNING, logger="app.audit"):
        writer = asyncio.run(run())
    assert writer.lost == 1
    assert any("row lost" in r.message and second.key_id in r.message for r in caplog.records)
    keys = (first.key_id, second.key_id)
    with psycopg.connect(database) as conn:
        for query in (
            "SELECT chave_id, count(*) FROM auditoria WHERE chave_id = ANY(%s) GROUP BY 1",
            "SELECT chave_id, sum(consultas) FROM uso_chaves WHERE chave_id = ANY(%s) GROUP BY 1",
        ):
            assert dict(conn.execute(query, (list(keys),)).fetchall()) == dict.fromkeys(keys, 10)


def test_audit_batch_units_counted_in_usage(api_server: Server, make_key: MakeKey) -> None:
    caller, admin = make_key(), make_key(papel="admin")
    items = ["33683111000280", "00000000000191", "123", "11222333000181"]
    with api_server.client(headers=caller.headers) as client:
        assert client.post("/v1/cnpj/lote", json=items).status_code == 200
        deadline = time.monotonic() + 30
        while True:
            usage = client.get("/v1/me/uso").json()["data"]
            if usage or time.monotonic() > deadline:
                break
            time.sleep(0.1)
    assert [(u["chave_id"], u["consultas"]) for u in usage] == [(caller.key_id, 4)]
    row = _rows(api_server, admin, 1, chave=caller.key_id, rota="/v1/cnpj/lote")["data"][0]
    assert row["unidades"] == 4


def test_audit_rows_of_refused_calls_revoked_allowlist_and_limit(
    api_server: Server, make_key: MakeKey
) -> None:
    """Calls refused with a known key are audited under it: revoked (401), outside the
    allowlist (403) and over the plan's window (429)."""
    owner, admin = make_key(plano="starter"), make_key(papel="admin")
    with api_server.client(headers=owner.headers) as client:
        fenced = client.post("/v1/me/chaves", json={"rotulo": "cerca", "allowlist": ["10.9.9.9"]})
        revoked = client.post("/v1/me/chaves", json={"rotulo": "velha"}).json()
        client.delete(f"/v1/me/chaves/{revoked['chave']['id']}")  # window full now: 3 calls
        assert client.get("/v1/me/chaves").status_code == 429
        fenced_key = fenced.json()["api_key"]
        assert (
            client.get(
                "/v1/me/chaves", headers={"Authorization": f"Bearer {fenced_key}"}
            ).status_code
            == 403
        )
        again = client.get(
            "/v1/me/chaves", headers={"Authorization": f"Bearer {revoked['api_key']}"}
        )
        assert again.status_code == 401
    owner_rows = _rows(api_server, admin, 4, chave=owner.key_id)["data"]
    fenced_rows = _rows(api_server, admin, 1, chave=fenced.json()["chave"]["id"])["data"]
    revoked_rows = _rows(api_server, admin, 1, chave=revoked["chave"]["id"])["data"]
    assert [r["status"] for r in owner_rows] == [429, 204, 201, 201]
    assert [r["status"] for r in fenced_rows] == [403]
    assert [r["status"] for r in revoked_rows] == [401]


def test_audit_filters_and_key_ids_with_nul_are_refused(
    api_server: Server, make_key: MakeKey
) -> None:
    """A NUL cannot reach PostgreSQL (it refuses one in text): a 400 for the audit's filters,
    a 404 for a key id, not a 500."""
    admin = make_key(papel="admin")
    with api_server.client(headers=admin.headers) as client:
        for name in ("chave", "rota", "operacao"):
            answer = client.get("/v1/admin/auditoria", params={name: "a\x00b"})
            assert answer.status_code == 400, answer.text
        assert client.delete("/v1/me/chaves/a%00b").status_code == 404
        allowlist = client.put("/v1/me/chaves/a%00b/allowlist", json={"allowlist": []})
        assert allowlist.status_code == 404


def test_audit_filter_by_refusal_status_is_planned_on_its_index() -> None:
    """The status index (migration 0007) holds only the rows that are not 200, and the listing's
    own filter reaches it: the page of a rare status needs no backward scan of the table."""
    with psycopg.connect(migrated()) as conn:
        valid, predicate = conn.execute(
            "SELECT i.indisvalid, pg_get_expr(i.indpred, i.indrelid) FROM pg_index i "
            "JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = 'auditoria_status'"
        ).fetchone() or (False, None)
        assert valid
        assert predicate == "(status <> 200)"
        conn.execute("SET LOCAL enable_seqscan = off")
        filtro = {"chave": None, "rota": None, "operacao": None, "desde": None, "ate": None}
        plan = conn.execute(
            "EXPLAIN SELECT id FROM auditoria" + WHERE + " ORDER BY id DESC LIMIT 50",
            {**filtro, "status": 404},
        ).fetchall()
        assert "auditoria_status" in " ".join(row[0] for row in plan)
