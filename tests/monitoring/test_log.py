"""The delivery log: filtered by event, walked by cursor (every row once, newest first), bad
or foreign cursors refused, another account's event out of reach; and the unprefixed
`/me/monitoramentos` routes answering like their `/v1` twins."""

from __future__ import annotations

from typing import Any, get_args

import httpx

from app.leads import lots
from app.monitoring import service
from tests.conftest import Issued, MakeKey, Server
from tests.monitoring.conftest import age_baselines, create_monitor, force_change, log_of
from tests.peers import Receiver, Worker, until

SAMPLE_CNPJ = "57815224000179"
BASE = "/v1/me/monitoramentos"
LOG = f"{BASE}/logs"


def _page(server: Server, key: Issued, path: str = LOG, **params: Any) -> httpx.Response:
    with server.client(headers=key.headers) as client:
        return client.get(path, params=params)


def _walk(server: Server, key: Issued, **params: Any) -> list[dict[str, Any]]:
    """Every row of the log through `next_cursor`, page after page."""
    rows: list[dict[str, Any]] = []
    cursor = None
    while True:
        response = _page(server, key, **params, **({"cursor": cursor} if cursor else {}))
        assert response.status_code == 200, response.text
        page = response.json()
        rows += page["data"]
        cursor = page["next_cursor"]
        if not cursor:
            return rows


def _test_events(server: Server, key: Issued, monitor_id: int, count: int) -> list[str]:
    with server.client(headers=key.headers) as client:
        answers = [client.post(f"{BASE}/{monitor_id}/testar").json() for _ in range(count)]
    assert all(answer["ok"] for answer in answers), answers
    return [answer["entrega_id"] for answer in answers]


def _bad_cursor(response: httpx.Response) -> None:
    assert response.status_code == 400, response.text
    assert response.json()["details"]["campo"] == "cursor"


def test_log_filtered_by_event_and_walked_by_cursor(
    server: Server, make_key: MakeKey, receiver: Receiver, worker: Worker, database: str
) -> None:
    key = make_key()
    monitor = create_monitor(server, key, receiver, "log-eventos", SAMPLE_CNPJ)["monitor"]
    tests = _test_events(server, key, monitor["id"], 4)
    checked = force_change(database, server, key, monitor["id"])
    changed = until(lambda: log_of(server, key, evento="empresa.alterada"))
    assert [row["entrega_id"] for row in changed] == [checked["entrega_id"]]
    assert changed[0]["entrega_estado"] == "entregue"
    everything = log_of(server, key, limit=200)
    assert len(everything) == 5
    ids = [row["id"] for row in everything]
    assert ids == sorted(ids, reverse=True)
    only_tests = log_of(server, key, evento="monitor.teste")
    assert [row["entrega_id"] for row in only_tests] == tests[::-1]
    assert {row["evento"] for row in only_tests} == {"monitor.teste"}
    assert log_of(server, key, evento="empresa.removida") == []
    walked = _walk(server, key, limit=2)
    assert [row["id"] for row in walked] == ids
    assert _walk(server, key, evento="monitor.teste", limit=3) == only_tests
    assert _walk(server, key, limit=5) == everything
    for params, expected in (({"limit": 2}, 5), ({"evento": "monitor.teste", "limit": 1}, 4),
                             ({"evento": "empresa.removida"}, 0)):  # fmt: skip
        first = _page(server, key, **params).json()
        assert first["total"] == expected, params  # on every page, whatever the limit
        if first["next_cursor"]:
            later = _page(server, key, **params, cursor=first["next_cursor"]).json()
            assert later["total"] == expected


def test_log_refuses_malformed_and_foreign_cursors(
    server: Server, make_key: MakeKey, receiver: Receiver
) -> None:
    owner, other = make_key(), make_key()
    monitor = create_monitor(server, owner, receiver, "log-cursor", SAMPLE_CNPJ)["monitor"]
    _test_events(server, owner, monitor["id"], 3)
    cursor = _page(server, owner, limit=1).json()["next_cursor"]
    assert cursor
    assert _page(server, owner, limit=1, cursor=cursor).status_code == 200
    for malformed in ("x", "abc.def", cursor[:-2], cursor.replace(".", ".A"), "." * 40):
        _bad_cursor(_page(server, owner, limit=1, cursor=malformed))
    _bad_cursor(_page(server, other, limit=1, cursor=cursor))  # another account's
    _bad_cursor(_page(server, owner, limit=1, cursor=cursor, evento="monitor.teste"))
    _bad_cursor(_page(server, owner, limit=1, cursor=cursor, monitor=monitor["id"]))
    for n in range(2):
        create_monitor(server, owner, receiver, f"log-cursor-{n}", SAMPLE_CNPJ)
    monitors_cursor = _page(server, owner, BASE, limit=1).json()["next_cursor"]
    assert monitors_cursor
    _bad_cursor(_page(server, owner, limit=1, cursor=monitors_cursor))  # another list's


def test_other_accounts_event_cannot_be_resent(
    server: Server, make_key: MakeKey, receiver: Receiver
) -> None:
    owner, other = make_key(), make_key()
    monitor = create_monitor(server, owner, receiver, "log-alheio", SAMPLE_CNPJ)["monitor"]
    [event] = _test_events(server, owner, monitor["id"], 1)
    path = f"{LOG}/{event}/reenviar"
    with server.client(headers=other.headers) as client:
        assert client.post(path).status_code == 404
        assert client.post(path.removeprefix("/v1")).status_code == 404
        assert client.get(LOG).json()["data"] == []
    with server.client(headers=owner.headers) as client:
        assert client.post(f"{LOG}/00000000-0000-4000-8000-000000000000/reenviar").status_code == (
            404
        )
    [row] = log_of(server, owner)
    assert (row["entrega_id"], row["tentativa"]) == (event, 1)


def test_unprefixed_monitoring_routes_answer_like_their_v1_twins(
    server: Server, make_key: MakeKey, receiver: Receiver, database: str
) -> None:
    key = make_key()
    with server.client(headers=key.headers) as client:
        response = client.post(
            "/me/monitoramentos",
            json={"cnpj": SAMPLE_CNPJ, "webhook_url": receiver.url("sem-prefixo")},
        )
        assert response.status_code == 201, response.text
        created = response.json()
        receiver.secrets["sem-prefixo"] = created["segredo"]
        monitor_id = created["monitor"]["id"]
        assert client.get(f"{BASE}/{monitor_id}").json() == created["monitor"]
        tested = client.post(f"/me/monitoramentos/{monitor_id}/testar").json()
        assert (tested["ok"], tested["status_http"], tested["erro"]) == (True, 200, None)
        [got] = receiver.of("sem-prefixo")
        assert got.verified is True
        assert got.headers["webhook-id"] == tested["entrega_id"]
        bare_log = client.get("/me/monitoramentos/logs", params={"evento": "monitor.teste"})
        assert bare_log.json() == client.get(LOG, params={"evento": "monitor.teste"}).json()
        assert [row["entrega_id"] for row in bare_log.json()["data"]] == [tested["entrega_id"]]
        same = client.post(f"/me/monitoramentos/{monitor_id}/verificar").json()
        assert same == client.post(f"{BASE}/{monitor_id}/verificar").json()
        assert (same["alterado"], same["entrega_id"]) == (False, None)
        age_baselines(database, [monitor_id])
        changed = client.post(f"/me/monitoramentos/{monitor_id}/verificar").json()
        assert changed["alterado"] is True
        assert changed["entrega_id"]
        assert changed["mudancas"][0]["antes"] == "NOME ANTIGO LTDA"
        assert client.post("/me/monitoramentos", json={"cnpj": "123"}).status_code == 400


def test_log_filter_takes_only_known_events(server: Server, make_key: MakeKey) -> None:
    """`evento` is one of the events the log holds: anything else (a NUL byte among them,
    which PostgreSQL's text cannot hold) is a 400 naming the field, never a 500."""
    key = make_key()
    for evento in ("empresa.alterada", "monitor.teste", "lote.concluido"):
        assert _page(server, key, evento=evento).status_code == 200
    for evento in ("a\x00b", "outro", "x" * 41):
        response = _page(server, key, evento=evento)
        assert response.status_code == 400, response.text
        assert "evento" in response.text


def test_log_event_names_cover_every_event_raised() -> None:
    raised = {*service.EVENTS, service.TEST_EVENT, lots.EVENT_DONE, lots.EVENT_FAILED}
    assert set(get_args(service.TipoEvento)) == raised


def test_paused_monitor_not_checked_its_change_kept_for_when_it_resumes(
    server: Server, make_key: MakeKey, receiver: Receiver, database: str
) -> None:
    """`/verificar` on a paused monitor is a 409 that moves nothing: the change is reported
    once the monitor is resumed (it used to be raised, cancelled and never delivered)."""
    key = make_key()
    monitor_id = create_monitor(server, key, receiver, "pausado", SAMPLE_CNPJ)["monitor"]["id"]
    age_baselines(database, [monitor_id])
    with server.client(headers=key.headers) as client:
        assert client.patch(f"{BASE}/{monitor_id}", json={"estado": "pausado"}).status_code == 200
        refused = client.post(f"{BASE}/{monitor_id}/verificar")
        assert refused.status_code == 409, refused.text
        assert "pausado" in refused.json()["message"]
        assert client.patch(f"{BASE}/{monitor_id}", json={"estado": "ativo"}).status_code == 200
        resumed = client.post(f"{BASE}/{monitor_id}/verificar").json()
    assert resumed["alterado"] is True
    assert resumed["mudancas"][0]["antes"] == "NOME ANTIGO LTDA"
