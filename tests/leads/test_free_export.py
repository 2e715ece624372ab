"""The free export's daily caps taken apart (the account's cap whatever the fingerprint, a
refused export counting for nobody) and its metering: one `exportacoes` per export in the
usage counters, `exportar_leads_gratis` in the audit log."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import psycopg

from tests.conftest import Issued, MakeKey, Server
from tests.leads.conftest import PAID_PLAN, ok, usage_once_written
from tests.leads.test_lots import FILTERS, post

EXPORT = "/v1/leads/exportacao"
BODY = {**FILTERS, "quantidade": 3}


def _fingerprint() -> str:
    return f"fp-{uuid.uuid4().hex}"


def _export(server: Server, key: Issued, fingerprint: str | None = None) -> httpx.Response:
    return post(
        server, key, EXPORT, {**BODY, **({"fingerprint": fingerprint} if fingerprint else {})}
    )


def _refused(response: httpx.Response) -> None:
    assert response.status_code == 429, response.text
    assert response.json()["details"] == {"limite_diario": 3}
    assert 0 < int(response.headers["Retry-After"]) <= 86400


def test_account_cap_holds_whatever_the_fingerprint(
    leads_server: Server, make_key: MakeKey, plans: None
) -> None:
    key = make_key(PAID_PLAN)
    left = [ok(_export(leads_server, key, _fingerprint()))["restantes_hoje"] for _ in range(3)]
    assert left == [2, 1, 0]
    fresh = _fingerprint()
    _refused(_export(leads_server, key, fresh))
    _refused(_export(leads_server, key))
    # The refused export counted nothing for the new fingerprint: it has its three.
    other = make_key(PAID_PLAN)
    assert ok(_export(leads_server, other, fresh))["restantes_hoje"] == 2


def test_export_refused_by_its_fingerprint_counts_nothing_for_the_account(
    leads_server: Server, make_key: MakeKey, plans: None
) -> None:
    device = _fingerprint()
    for _ in range(3):
        ok(_export(leads_server, make_key(PAID_PLAN), device))
    key = make_key(PAID_PLAN)
    _refused(_export(leads_server, key, device))
    _refused(_export(leads_server, key, device))
    assert ok(_export(leads_server, key))["restantes_hoje"] == 2


def _audited(database: str, key: Issued) -> list[tuple[Any, ...]]:
    with psycopg.connect(database) as conn:
        rows = conn.execute(
            "SELECT operacao, status, unidades FROM auditoria "
            "WHERE chave_id = %s AND operacao IS NOT NULL ORDER BY id",
            (key.key_id,),
        ).fetchall()
    return [tuple(row) for row in rows]


def test_free_export_is_metered_as_one_export(
    leads_server: Server, make_key: MakeKey, plans: None, database: str
) -> None:
    key = make_key(PAID_PLAN)
    assert ok(_export(leads_server, key))["linhas"] == 3
    assert ok(post(leads_server, key, "/leads/exportacao", BODY))["linhas"] == 3
    counters = usage_once_written(leads_server, key, 2)
    assert counters == {"consultas": 0, "buscas": 0, "analises": 0, "exportacoes": 2}
    assert _audited(database, key) == [("exportar_leads_gratis", 200, 1)] * 2


def test_export_matching_nothing_is_refused_and_uses_no_free_export(
    leads_server: Server, make_key: MakeKey, plans: None
) -> None:
    key = make_key(PAID_PLAN)
    nothing = post(leads_server, key, EXPORT, {**BODY, "cidade": "Xyzzy"})
    assert nothing.status_code == 400, nothing.text
    assert nothing.json()["message"].startswith("Nenhuma empresa atende a estes filtros")
    assert ok(_export(leads_server, key))["restantes_hoje"] == 2  # the first one today
