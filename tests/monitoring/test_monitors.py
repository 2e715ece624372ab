"""Monitors over HTTP: creation (with its secret shown once), validation of the CNPJ and the
URL, the plan's cap, listing, pausing, resuming, rotating the secret, deleting, and another
account's monitor out of reach."""

from __future__ import annotations

import asyncio
import socket
import threading
from typing import Any

import psycopg
import pytest
import yarl

from app.errors import BadRequestError
from app.monitoring import repository
from app.monitoring.service import ALREADY_WATCHED
from app.webhooks import addresses
from tests.conftest import MakeKey, Server, serving
from tests.monitoring.conftest import create_monitor
from tests.peers import Receiver

SAMPLE_CNPJ = "57815224000179"
BASE = "/v1/me/monitoramentos"
OK = "{receiver}"
"""Stands for a URL the test server accepts (the loopback receiver, an allowed network)."""


def test_create_monitor_secret_once_and_listing(
    server: Server, make_key: MakeKey, receiver: Receiver
) -> None:
    key = make_key()
    created = create_monitor(server, key, receiver, "lista", SAMPLE_CNPJ, descricao="cliente")
    monitor = created["monitor"]
    assert created["segredo"].startswith("whsec_")
    assert monitor["estado"] == "ativo"
    assert monitor["eventos"] == ["empresa.alterada", "empresa.removida"]
    with server.client(headers=key.headers) as client:
        listed = client.get(BASE).json()
        one = client.get(f"{BASE}/{monitor['id']}").json()
        alias = client.get(f"/me/monitoramentos/{monitor['id']}")
    assert listed["total"] == 1
    assert listed["data"] == [monitor] == [one]
    assert alias.status_code == 200
    assert created["segredo"] not in str(listed) + str(one)


NOT_PUBLIC_HOSTS = (
    "[fec0::1]", "[::ffff:0:7f00:1]", "192.0.0.8", "192.31.196.1", "224.0.0.1", "[ff02::1]",
    "134744072", "0x7f.1", "127.1", "[fec0::3%25eth0]", "１３４７４４０７２", "０ｘ７ｆ.１",
)  # fmt: skip
"""Special-purpose ranges Python counts as global (site-local, SIIT's form of 127.0.0.1, IETF
protocol assignments, AS112), multicast; hosts some clients read as an address and others
refuse (one number, short forms); a zone id."""


@pytest.mark.parametrize(
    ("body", "status", "field"),
    [
        ({"cnpj": "123", "webhook_url": OK}, 400, None),
        ({"cnpj": "00000000000191", "webhook_url": OK}, 404, None),
        ({"cnpj": SAMPLE_CNPJ, "webhook_url": "ftp://example.com/x"}, 400, "webhook_url"),
        ({"cnpj": SAMPLE_CNPJ, "webhook_url": "https://user:pw@example.com/x"}, 400, "webhook_url"),
        ({"cnpj": SAMPLE_CNPJ, "webhook_url": "https://10.0.0.1/hook"}, 400, "webhook_url"),
        (
            {"cnpj": SAMPLE_CNPJ, "webhook_url": "https://169.254.169.254/latest"},
            400,
            "webhook_url",
        ),
        ({"cnpj": SAMPLE_CNPJ, "webhook_url": "https://[fe80::1]/x"}, 400, "webhook_url"),
        # IPv6 carrying an IPv4 inside (NAT64, IPv4-compatible, 6to4): 127.0.0.1 through a gateway
        ({"cnpj": SAMPLE_CNPJ, "webhook_url": "https://[64:ff9b::7f00:1]/x"}, 400, "webhook_url"),
        ({"cnpj": SAMPLE_CNPJ, "webhook_url": "https://[::7f00:1]/x"}, 400, "webhook_url"),
        ({"cnpj": SAMPLE_CNPJ, "webhook_url": "https://[2002:7f00:1::]/x"}, 400, "webhook_url"),
        ({"cnpj": SAMPLE_CNPJ, "webhook_url": "https://nao-existe.invalid/x"}, 400, "webhook_url"),
        *(
            ({"cnpj": SAMPLE_CNPJ, "webhook_url": f"https://{host}/x"}, 400, "webhook_url")
            for host in NOT_PUBLIC_HOSTS
        ),
        # control characters (PostgreSQL text takes no NUL; a newline would split a header),
        # an unclosed IPv6 bracket, ports out of range: refused before any lookup
        ({"cnpj": SAMPLE_CNPJ, "webhook_url": "https://93.184.216.34/h\x00k"}, 400, "webhook_url"),
        (
            {"cnpj": SAMPLE_CNPJ, "webhook_url": "https://93.184.216.34/h\nX-Injected: 1"},
            400,
            "webhook_url",
        ),
        ({"cnpj": SAMPLE_CNPJ, "webhook_url": "https://[2606:2800:220:1::/h"}, 400, "webhook_url"),
        ({"cnpj": SAMPLE_CNPJ, "webhook_url": "https://93.184.216.34:0/h"}, 400, "webhook_url"),
        ({"cnpj": SAMPLE_CNPJ, "webhook_url": "https://93.184.216.34:99999/h"}, 400, "webhook_url"),
        (
            {"cnpj": SAMPLE_CNPJ, "webhook_url": "https://example.com/x", "eventos": ["outro"]},
            400,
            None,
        ),
        ({"cnpj": SAMPLE_CNPJ, "webhook_url": "https://example.com/x", "cor": 1}, 400, None),
    ],
)
def test_create_monitor_bad_input_refused(
    server: Server,
    make_key: MakeKey,
    receiver: Receiver,
    body: dict[str, Any],
    status: int,
    field: str | None,
) -> None:
    body = {**body, "webhook_url": body["webhook_url"].replace(OK, receiver.url("ok"))}
    with server.client(headers=make_key().headers) as client:
        response = client.post(BASE, json=body)
    assert response.status_code == status, response.text
    assert response.json()["error"]
    if field:
        assert response.json()["details"]["campo"] == field


def test_private_target_refused_unless_operator_allows(
    peer_alias: str, make_key: MakeKey, receiver: Receiver
) -> None:
    """Without `WEBHOOK_ALLOW_NETWORKS` (the default), loopback is refused when saved."""
    with serving(peer_alias) as strict, strict.client(headers=make_key().headers) as client:
        loopback = receiver.url("x").replace("http://", "https://")
        response = client.post(BASE, json={"cnpj": "33683111000280", "webhook_url": loopback})
        assert response.status_code == 400, response.text
        assert response.json()["details"]["enderecos"] == ["127.0.0.1"], response.text
        http = client.post(
            BASE, json={"cnpj": "33683111000280", "webhook_url": "http://example.com/x"}
        )
        assert http.status_code == 400  # http only when the operator allows it


def test_monitor_cap_by_plan_and_duplicate(
    server: Server, make_key: MakeKey, receiver: Receiver, database: str
) -> None:
    with psycopg.connect(database) as conn:
        conn.execute(
            "INSERT INTO planos (nome, limite_por_minuto, monitores_max) VALUES "
            "('teste-tres-monitores', 1000, 3) "
            "ON CONFLICT (nome) DO UPDATE SET monitores_max = excluded.monitores_max"
        )
    key = make_key(plano="teste-tres-monitores")
    created = [create_monitor(server, key, receiver, f"cap{n}", SAMPLE_CNPJ) for n in range(3)]
    with server.client(headers=key.headers) as client:
        refused = client.post(BASE, json={"cnpj": SAMPLE_CNPJ, "webhook_url": receiver.url("cap3")})
        duplicate = client.post(
            BASE, json={"cnpj": SAMPLE_CNPJ, "webhook_url": receiver.url("cap0")}
        )
        moved = client.patch(  # the URL another monitor of the account already has
            f"{BASE}/{created[1]['monitor']['id']}", json={"webhook_url": receiver.url("cap0")}
        )
        kept = client.get(f"{BASE}/{created[1]['monitor']['id']}").json()
    assert refused.status_code == 409
    assert refused.json()["details"] == {"maximo": 3}
    assert duplicate.status_code == 409
    assert moved.status_code == 409
    assert moved.json()["message"] == ALREADY_WATCHED
    assert kept["webhook_url"] == receiver.url("cap1")
    with server.client(headers=make_key().headers) as client:  # one endpoint spelt two ways
        url = receiver.url("grafia")
        first = client.post(BASE, json={"cnpj": SAMPLE_CNPJ, "webhook_url": url + "#a"})
        again = client.post(
            BASE, json={"cnpj": SAMPLE_CNPJ, "webhook_url": "HTTP" + url.removeprefix("http")}
        )
    assert first.status_code == 201, first.text
    assert first.json()["monitor"]["webhook_url"] == url  # the fragment is never sent
    assert again.status_code == 409
    spellings = [  # an address in its one form; IPv4 mapped into IPv6 is the IPv4 address
        ("https://[2606:2800:0220:1::1]/x", "https://[2606:2800:220:1:0::1]/x",
         "https://[2606:2800:220:1::1]/x"),
        ("https://[::ffff:93.184.216.34]/y", "https://93.184.216.34/y", "https://93.184.216.34/y"),
    ]  # fmt: skip
    for written, again_written, stored in spellings:
        with server.client(headers=make_key().headers) as client:
            address = client.post(BASE, json={"cnpj": SAMPLE_CNPJ, "webhook_url": written})
            same = client.post(BASE, json={"cnpj": SAMPLE_CNPJ, "webhook_url": again_written})
        assert address.status_code == 201, address.text
        assert address.json()["monitor"]["webhook_url"] == stored
        assert same.status_code == 409
    with psycopg.connect(database) as conn:
        caps = dict(conn.execute("SELECT nome, monitores_max FROM planos").fetchall())
    assert (caps["starter"], caps["basic"], caps["pro"], caps["business"], caps["enterprise"]) == (
        10,
        100,
        1000,
        5000,
        20000,
    )


def test_pause_resume_update_rotate_delete(
    server: Server, make_key: MakeKey, receiver: Receiver
) -> None:
    key = make_key()
    created = create_monitor(server, key, receiver, "vida", SAMPLE_CNPJ)
    path = f"{BASE}/{created['monitor']['id']}"
    with server.client(headers=key.headers) as client:
        paused = client.patch(path, json={"estado": "pausado"}).json()
        assert paused["estado"] == "pausado"
        assert client.get(BASE, params={"estado": "ativo"}).json()["total"] == 0
        resumed = client.patch(
            path, json={"estado": "ativo", "eventos": ["empresa.removida"]}
        ).json()
        assert (resumed["estado"], resumed["eventos"]) == ("ativo", ["empresa.removida"])
        assert client.patch(path, json={"webhook_url": "https://10.1.1.1/x"}).status_code == 400
        rotated = client.post(f"{path}/segredo").json()["segredo"]
        assert rotated.startswith("whsec_")
        assert rotated != created["segredo"]
        assert client.delete(path).status_code == 204
        assert client.get(path).status_code == 404
        assert client.delete(path).status_code == 404


def test_other_accounts_monitor_out_of_reach(
    server: Server, make_key: MakeKey, receiver: Receiver
) -> None:
    owner, other = make_key(), make_key()
    created = create_monitor(server, owner, receiver, "alheio", SAMPLE_CNPJ)
    path = f"{BASE}/{created['monitor']['id']}"
    with server.client(headers=other.headers) as client:
        for method, suffix in (
            ("GET", ""),
            ("PATCH", ""),
            ("DELETE", ""),
            ("POST", "/testar"),
            ("POST", "/verificar"),
            ("POST", "/segredo"),
        ):
            response = client.request(method, path + suffix, json={} if method == "PATCH" else None)
            assert response.status_code == 404, (method, suffix)
        assert client.get(BASE).json()["total"] == 0


def test_admin_run_admin_only(server: Server, make_key: MakeKey) -> None:
    with server.client(headers=make_key().headers) as client:
        assert client.post("/v1/admin/monitoramentos/run").status_code == 403
    with server.client(headers=make_key(papel="admin").headers) as admin:
        answer = admin.post("/admin/monitoramentos/run")
    assert answer.status_code == 200
    assert set(answer.json()) == {"indice", "verificados", "alterados", "removidos", "eventos"}


def test_monitors_paged_by_cursor(server: Server, make_key: MakeKey, receiver: Receiver) -> None:
    key = make_key()
    ids = [
        create_monitor(server, key, receiver, f"pg{n}", SAMPLE_CNPJ)["monitor"]["id"]
        for n in range(5)
    ]
    seen: list[int] = []
    params: dict[str, Any] = {"limit": 2}
    with server.client(headers=key.headers) as client:
        while True:
            page = client.get(BASE, params=params).json()
            seen += [item["id"] for item in page["data"]]
            if not page["next_cursor"]:
                break
            params["cursor"] = page["next_cursor"]
        assert client.get(BASE, params={"cursor": "x"}).status_code == 400
    assert seen == ids


def test_ids_beyond_a_bigint_are_refused_not_failed(server: Server, make_key: MakeKey) -> None:
    """Found by the contract fuzzer and review: an id past PostgreSQL's bigint, and a NUL in
    a description, were 500s."""
    huge = str(2**63)
    with server.client(headers=make_key().headers) as client:
        log = client.get(f"{BASE}/logs", params={"monitor": huge})
        assert log.status_code == 400, log.text
        assert client.get(f"{BASE}/{huge}").status_code == 404
        assert client.delete(f"{BASE}/{huge}").status_code == 404
        nul = client.post(BASE, json={"cnpj": SAMPLE_CNPJ, "webhook_url": "https://example.com/h",
                                      "descricao": "a\x00b"})  # fmt: skip
        assert nul.status_code == 400, nul.text


def test_create_monitor_empty_body_says_what_is_missing(server: Server, make_key: MakeKey) -> None:
    with server.client(headers=make_key().headers) as client:
        response = client.post(BASE, content=b"", headers={"Content-Type": "application/json"})
    assert response.status_code == 400, response.text
    assert response.json()["message"] == "Corpo ausente: envie um objeto JSON."


def test_plan_allowance_sees_a_monitor_committed_while_it_waited(
    make_key: MakeKey, database: str
) -> None:
    """Two creations at once: the second waits on the account's row, and once the first has
    committed its monitor it counts it (so the plan's last monitor is taken once)."""
    conta_id = make_key().conta_id

    async def race() -> tuple[int, int]:
        first = await psycopg.AsyncConnection.connect(database)
        second = await psycopg.AsyncConnection.connect(database)
        async with first, second:
            async with first.transaction():
                before, _ = await repository.plan_allowance(first, conta_id)
                waiting = asyncio.create_task(_counted(second, conta_id))
                await asyncio.sleep(0.3)  # the second is blocked on the row lock meanwhile
                assert not waiting.done()
                await repository.insert_monitor(
                    first, conta_id=conta_id, cnpj=SAMPLE_CNPJ, webhook_url="https://a.example/h",
                    eventos=["empresa.alterada"], descricao="", sal="s", referencia={},
                    referencia_hash="h", indice=None, alias="teste-corrida",
                )  # fmt: skip
            return before, await waiting

    before, seen = asyncio.run(race())
    assert seen == before + 1


async def _counted(conn: psycopg.AsyncConnection[Any], conta_id: int) -> int:
    async with conn.transaction():
        have, _ = await repository.plan_allowance(conn, conta_id)
        return have


def test_a_release_check_sees_only_its_own_alias_monitors(make_key: MakeKey, database: str) -> None:
    """Installs of several aliases on one database: a check of one alias's release never takes
    another alias's monitors; one made before monitors had an alias is everyone's."""
    conta_id = make_key().conta_id

    async def made() -> dict[str, int]:
        ids: dict[str, int] = {}
        async with await psycopg.AsyncConnection.connect(database) as conn:
            for alias in ("alias-um", "alias-dois"):
                vigia = await repository.insert_monitor(
                    conn, conta_id=conta_id, cnpj=SAMPLE_CNPJ,
                    webhook_url=f"https://{alias}.example/h", eventos=["empresa.alterada"],
                    descricao="", sal="s", referencia={}, referencia_hash="h", indice=None,
                    alias=alias,
                )  # fmt: skip
                assert vigia is not None
                ids[alias] = vigia.id
            cursor = await conn.execute(
                "INSERT INTO monitores (conta_id, cnpj, webhook_url, eventos, descricao, "
                "segredo_sal, referencia, referencia_hash) VALUES "
                "(%s, %s, 'https://antigo.example/h', '{empresa.alterada}', '', 's', '{}', 'h') "
                "RETURNING id",
                (conta_id, SAMPLE_CNPJ),
            )
            row = await cursor.fetchone()
            assert row is not None
            ids["antigo"] = row[0]
            await conn.commit()
            first = min(ids.values()) - 1
            seen = {
                alias: {v.id for v in await repository.active_batch(conn, alias, first, 10**6)}
                for alias in ("alias-um", "alias-dois")
            }
        assert seen["alias-um"] & set(ids.values()) == {ids["alias-um"], ids["antigo"]}
        assert seen["alias-dois"] & set(ids.values()) == {ids["alias-dois"], ids["antigo"]}
        return ids

    asyncio.run(made())


@pytest.mark.parametrize(
    ("written", "connected"),
    [
        ("example.com", "example.com"),
        ("ＥＸＡＭＰＬＥ.com", "example.com"),
        ("straße.de", "xn--strae-oqa.de"),  # IDNA 2008, as aiohttp connects (2003 said strasse)
        ("σόλος.gr", "xn--wxaijb9b.gr"),
        ("a_b.example.com", "a_b.example.com"),
        ("2606:2800:0220:1::1", "2606:2800:220:1::1"),
    ],
)
def test_webhook_host_stored_as_the_client_connects_to_it(written: str, connected: str) -> None:
    assert addresses.host_of(written) == connected
    assert yarl.URL.build(scheme="https", host=written).raw_host == connected.strip("[]")


def test_slow_name_servers_hold_no_thread_and_time_out_together(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A saved URL's host is looked up asynchronously (c-ares), within `DNS_TIMEOUT`: against a
    name server that never answers (a silent UDP peer on loopback), twenty saves at once each
    get a 400 in about the timeout, together, sharing c-ares' one thread rather than holding a
    thread each."""
    silent = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    silent.bind(("127.0.0.1", 0))
    monkeypatch.setattr(addresses, "NAMESERVERS", [f"127.0.0.1:{silent.getsockname()[1]}"])
    monkeypatch.setattr(addresses, "DNS_TIMEOUT", 0.5)

    async def scenario() -> tuple[float, list[BaseException | str], int]:
        loop = asyncio.get_running_loop()
        threads = threading.active_count()
        started = loop.time()
        saves = [addresses.check_url(f"https://loja{n}.exemplo.test/hook", [], allow_http=False)
                 for n in range(20)]  # fmt: skip
        outcomes = await asyncio.gather(*saves, return_exceptions=True)
        return loop.time() - started, outcomes, threading.active_count() - threads

    try:
        waited, outcomes, more_threads = asyncio.run(scenario())
    finally:
        silent.close()
    assert 0.4 < waited < 3  # all twenty in about one timeout: none waited for a thread
    assert more_threads <= 1
    for outcome in outcomes:
        assert isinstance(outcome, BadRequestError), outcome
        assert "não respondeu a tempo" in outcome.message
        assert outcome.details == {"campo": "webhook_url"}
