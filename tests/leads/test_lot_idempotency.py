"""A lot asked for again with the same idempotency key is the same lot: a retried or doubled
request makes and charges one lot, even when the twins arrive together."""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import psycopg

from tests.conftest import Issued, MakeKey, Server
from tests.leads.conftest import PAID_PLAN, SMALL_PLAN, get, ok
from tests.leads.release import RESTAURANT

ASKED = {"cnae": RESTAURANT, "uf": "PR,SP,RJ", "quantidade": 600,
         "confirmar_lgpd": True, "uso_responsavel": True}  # fmt: skip


def create(
    server: Server, key: Issued, body: dict[str, Any], idempotency: str | bytes | None = None
) -> httpx.Response:
    headers = {**key.headers, **({"Idempotency-Key": idempotency} if idempotency else {})}
    with server.client(headers=headers, timeout=30) as client:
        return client.post("/v1/me/lotes", json=body)


def lot_ids(server: Server, key: Issued) -> list[int]:
    return [lot["id"] for lot in ok(get(server, key, "/v1/me/lotes"))["data"]]


def test_same_key_same_request_is_the_same_lot_charged_once(
    leads_server: Server, make_key: MakeKey, plans: None
) -> None:
    key = make_key(SMALL_PLAN)  # 1,000 leads a month: a second lot of 600 would be a 403
    idempotency = str(uuid.uuid4())
    body = {**ASKED, "webhook_url": "http://127.0.0.1:9/lotes"}
    first = create(leads_server, key, body, idempotency)
    assert first.status_code == 201, first.text
    again = create(leads_server, key, body, idempotency)
    assert again.status_code == 200, again.text
    made, repeated = first.json(), again.json()
    assert repeated["lote"]["id"] == made["lote"]["id"]
    assert (made["repetido"], repeated["repetido"]) == (False, True)
    assert made["segredo"]
    assert repeated["segredo"] is None  # a secret is shown once
    in_body = create(leads_server, key, {**body, "chave_idempotencia": idempotency})
    assert in_body.status_code == 200, in_body.text
    assert in_body.json()["lote"]["id"] == made["lote"]["id"]
    assert lot_ids(leads_server, key) == [made["lote"]["id"]]
    other = create(leads_server, key, body, str(uuid.uuid4()))  # a new key is a new lot
    assert other.status_code == 403, other.text
    assert other.json()["details"]["usados"] == 600


def test_twins_sent_together_make_one_lot(
    leads_server: Server, make_key: MakeKey, plans: None
) -> None:
    key = make_key(PAID_PLAN)
    idempotency = str(uuid.uuid4())
    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda _: create(leads_server, key, ASKED, idempotency), range(4)))
    assert sorted(a.status_code for a in answers) == [200, 200, 200, 201], [a.text for a in answers]
    assert len({a.json()["lote"]["id"] for a in answers}) == 1
    assert len(lot_ids(leads_server, key)) == 1


def test_same_key_other_request_or_malformed_key_is_refused(
    leads_server: Server, make_key: MakeKey, plans: None
) -> None:
    key = make_key(PAID_PLAN)
    idempotency = str(uuid.uuid4())
    made = ok(create(leads_server, key, ASKED, idempotency))
    other = create(leads_server, key, {**ASKED, "quantidade": 601}, idempotency)
    assert other.status_code == 409, other.text
    assert other.json()["details"] == {"campo": "chave_idempotencia", "lote": made["lote"]["id"]}
    for bad in ("x" * 256, "com espaco", "tab\tkey", "acentua\xe7\xe3o".encode("latin-1")):
        refused = create(leads_server, key, ASKED, bad)
        assert refused.status_code == 400, refused.text
        assert refused.json()["details"]["campo"] == "Idempotency-Key"
    for bad_body in ("", "x" * 256, "nul\x00", "acentuação"):
        refused = create(leads_server, key, {**ASKED, "chave_idempotencia": bad_body})
        assert refused.status_code == 400, refused.text
        assert "chave_idempotencia" in refused.text
    both = create(leads_server, key, {**ASKED, "chave_idempotencia": "a"}, "b")
    assert both.status_code == 400, both.text
    assert both.json()["details"]["campo"] == "Idempotency-Key"
    assert lot_ids(leads_server, key) == [made["lote"]["id"]]


def test_a_key_names_its_lot_for_a_day_only(
    leads_server: Server, make_key: MakeKey, plans: None, database: str
) -> None:
    key = make_key(PAID_PLAN)
    idempotency = str(uuid.uuid4())
    made = ok(create(leads_server, key, ASKED, idempotency))["lote"]["id"]
    with psycopg.connect(database) as conn:
        conn.execute(
            "UPDATE lotes SET criado_em = criado_em - interval '25 hours' WHERE id = %s", (made,)
        )
    later = create(leads_server, key, {**ASKED, "quantidade": 601}, idempotency)
    assert later.status_code == 201, later.text
    assert later.json()["lote"]["id"] != made
    assert sorted(lot_ids(leads_server, key)) == [made, later.json()["lote"]["id"]]
