"""Lots when things go wrong, with workers started by each test (no other worker runs): a lot
whose filters no longer hold fails and gives its allowance back; a worker killed mid-lot."""

from __future__ import annotations

import io
import time
from pathlib import Path

import psycopg
from pypdf import PdfReader

from tests.conftest import Issued, Server
from tests.leads.conftest import environment, get, lot_state, ok, wait_lot
from tests.leads.release import LEADS
from tests.leads.test_lots import FILTERS, LGPD, download, post
from tests.peers import Receiver, Worker


def test_lot_whose_filters_no_longer_hold_fails_and_frees_its_allowance(
    leads_server: Server,
    paid_key: Issued,
    database: str,
    leads_alias: str,
    lots_dir: Path,
    receiver: Receiver,
) -> None:
    hook = "lote-falho"
    body = {**FILTERS, "quantidade": 5, "webhook_url": receiver.url(hook), **LGPD}
    created = ok(post(leads_server, paid_key, "/v1/me/lotes", body))
    receiver.secrets[hook] = created["segredo"]
    lote_id = created["lote"]["id"]
    with psycopg.connect(database) as conn:
        conn.execute('UPDATE lotes SET filtros = \'{"cnae": "abc"}\' WHERE id = %s', (lote_id,))
    running = Worker(leads_alias, **environment(lots_dir))
    try:
        lote = wait_lot(leads_server, paid_key, lote_id, ("falhou",))
        assert "cnae" in lote["erro"]
        event = receiver.wait(hook, 1)[0]
        assert event.verified is True
        assert event.event["type"] == "lote.falhou"
        assert download(leads_server, paid_key, lote_id).status_code == 409
        with psycopg.connect(database) as conn:
            row = conn.execute("SELECT reservado FROM lotes WHERE id = %s", (lote_id,)).fetchone()
        assert row == (0,)
    finally:
        running.stop()


def _processing(database: str, lote_id: int, seconds: float = 60) -> None:
    """Returns as soon as the lot is being made (polled every 5 ms)."""
    deadline = time.monotonic() + seconds
    with psycopg.connect(database, autocommit=True) as conn:
        while True:
            row = conn.execute("SELECT estado FROM lotes WHERE id = %s", (lote_id,)).fetchone()
            if row and row[0] == "processando":
                return
            assert time.monotonic() < deadline, row
            time.sleep(0.005)


def test_lot_survives_its_worker_killed_mid_file(
    leads_server: Server,
    paid_key: Issued,
    leads_alias: str,
    lots_dir: Path,
    receiver: Receiver,
    database: str,
) -> None:
    """Every active company of three states as a PDF (the largest file here); the worker is
    killed the moment the lot is being made, another one finishes it: one file, one event."""
    hook = "lote-morto"
    everyone = {"uf": "PR,SP,RJ"}
    total = sum(lead.active for lead in LEADS)
    created = ok(post(leads_server, paid_key, "/v1/me/lotes",
                      {**everyone, "quantidade": total, "formato": "pdf",
                       "webhook_url": receiver.url(hook), **LGPD}))  # fmt: skip
    receiver.secrets[hook] = created["segredo"]
    lote_id = created["lote"]["id"]
    assert download(leads_server, paid_key, lote_id).status_code == 409
    first = Worker(leads_alias, **environment(lots_dir))
    try:
        _processing(database, lote_id)
        first.kill()
    finally:
        first.stop(clean=False)
    assert lot_state(leads_server, paid_key, lote_id)["estado"] == "processando"
    assert not (lots_dir / f"lote-{lote_id}.pdf").exists()
    second = Worker(leads_alias, **environment(lots_dir))
    try:
        lote = wait_lot(leads_server, paid_key, lote_id, seconds=90)
        events = receiver.wait(hook, 1)
        time.sleep(1)
    finally:
        second.stop()
    files = sorted(path.name for path in lots_dir.iterdir() if f"lote-{lote_id}." in path.name)
    assert files == [f"lote-{lote_id}.pdf"]
    assert lote["linhas"] == total
    reader = PdfReader(io.BytesIO(download(leads_server, paid_key, lote_id).content))
    text = "\n".join(page.extract_text() or "" for page in reader.pages)
    assert all(lead.cnpj in text for lead in LEADS if lead.active)
    assert [event.event["type"] for event in receiver.of(hook)] == ["lote.concluido"]
    assert events[0].verified is True


def test_lot_tried_again_when_the_catalog_is_away(
    leads_server: Server, paid_key: Issued, database: str, leads_alias: str, lots_dir: Path
) -> None:
    """A segment read through the CNAE catalog, the catalog unreachable when the lot is made:
    the service's 503 is a passing failure, tried again (it failed the lot at once)."""
    body = {"segmento": "predominância de revenda", "quantidade": 5, **LGPD}
    counted = ok(get(leads_server, paid_key, "/v1/leads/contagem", segmento=body["segmento"]))
    assert [s["origem"] for s in counted["segmentos"]] == ["catalogo"]  # read in the catalog
    created = ok(post(leads_server, paid_key, "/v1/me/lotes", body))
    lote_id = created["lote"]["id"]
    away = Worker(leads_alias, **environment(lots_dir), ELASTICSEARCH_URL="http://127.0.0.1:1")
    try:
        with psycopg.connect(database, autocommit=True) as conn:
            deadline = time.monotonic() + 60
            while True:
                row = conn.execute(
                    "SELECT status, attempts FROM procrastinate_jobs WHERE args->>'lote_id' = %s",
                    (str(lote_id),),
                ).fetchone()
                if row is not None and row[1] >= 1:
                    break
                assert time.monotonic() < deadline, row
                time.sleep(0.1)
        assert row[0] == "todo"  # to be run again
        assert lot_state(leads_server, paid_key, lote_id)["estado"] != "falhou"
    finally:
        away.stop(clean=False)
    running = Worker(leads_alias, **environment(lots_dir))
    try:
        lote = wait_lot(leads_server, paid_key, lote_id, ("concluido", "falhou"), seconds=90)
        assert lote["estado"] == "concluido", lote
    finally:
        running.stop()
