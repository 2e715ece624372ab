"""Free exports and paid lots end to end: the LGPD, plan and allowance gates, files read back
by real readers (csv, openpyxl, pypdf) holding the ranked rows with their accents, no cell a
formula, the signed status webhook, ownership, expiry, and a worker killed mid-lot."""

from __future__ import annotations

import asyncio
import csv
import io
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import openpyxl
import procrastinate
import psycopg
import pytest
from pypdf import PdfReader

from app.monitoring import releases
from tests.conftest import Issued, MakeKey, Server
from tests.leads.conftest import SMALL_PLAN, get, lot_state, ok, wait_lot
from tests.leads.release import FORMULAS, LEADS, RESTAURANT
from tests.peers import Receiver, Worker, until

FILTERS = {"cnae": RESTAURANT, "uf": "PR,SP,RJ"}
LGPD = {"confirmar_lgpd": True, "uso_responsavel": True}


def post(server: Server, key: Issued, path: str, body: dict[str, Any]) -> httpx.Response:
    with server.client(headers=key.headers, timeout=30) as client:
        return client.post(path, json=body)


def ranked_cnpjs(server: Server, key: Issued, count: int) -> list[str]:
    found: list[str] = []
    cursor = None
    while len(found) < count:
        more: dict[str, str] = {"cursor": cursor} if cursor else {}
        page = ok(get(server, key, "/v1/leads", limit=100, **FILTERS, **more))
        found += [lead["empresa"]["cnpj"] for lead in page["data"]]
        cursor = page["next_cursor"]
        if not cursor:
            break
    return found[:count]


def download(server: Server, key: Issued, lote_id: int) -> httpx.Response:
    return get(server, key, f"/v1/me/lotes/{lote_id}/arquivo")


def csv_rows(content: bytes) -> list[list[str]]:
    assert content.startswith(b"\xef\xbb\xbf")
    return list(csv.reader(io.StringIO(content.decode("utf-8-sig")), delimiter=";"))


# ---------------------------------------------------------------- free export


def test_free_export_is_the_ranked_csv_and_capped_per_day(
    leads_server: Server, make_key: MakeKey, plans: None
) -> None:
    key = make_key("teste-leads")
    fingerprint = f"teste-{time.monotonic_ns()}"
    body = {**FILTERS, "quantidade": 30, "fingerprint": fingerprint}
    first = ok(post(leads_server, key, "/v1/leads/exportacao", body))
    assert first["linhas"] == 30
    assert first["separador"] == ";"
    rows = list(csv.reader(io.StringIO(first["csv"]), delimiter=";"))
    assert rows[0][:3] == ["#", "Score", "CNPJ"]
    assert [row[2] for row in rows[1:]] == ranked_cnpjs(leads_server, key, 30)
    assert first["restantes_hoje"] == 2
    ok(post(leads_server, key, "/v1/leads/exportacao", body))
    assert ok(post(leads_server, key, "/v1/leads/exportacao", body))["restantes_hoje"] == 0
    refused = post(leads_server, key, "/v1/leads/exportacao", body)
    assert refused.status_code == 429, refused.text
    assert 0 < int(refused.headers["Retry-After"]) <= 86400
    other = make_key("teste-leads")
    same_device = post(leads_server, other, "/v1/leads/exportacao", body)
    assert same_device.status_code == 429, "the fingerprint's cap holds across accounts"
    elsewhere = post(leads_server, other, "/v1/leads/exportacao", {**FILTERS, "quantidade": 5})
    assert ok(elsewhere)["linhas"] == 5
    too_many = post(leads_server, other, "/v1/leads/exportacao", {**FILTERS, "quantidade": 51})
    assert too_many.status_code == 400
    bad_print = post(leads_server, other, "/v1/leads/exportacao", {**FILTERS, "fingerprint": "a b"})
    assert bad_print.status_code == 400


# ---------------------------------------------------------------- gates


def test_lot_needs_lgpd_confirmation_paid_plan_and_allowance(
    leads_server: Server, paid_key: Issued, make_key: MakeKey
) -> None:
    for missing in ({}, {"confirmar_lgpd": True}, {"uso_responsavel": True},
                    {"confirmar_lgpd": True, "uso_responsavel": False}):  # fmt: skip
        refused = post(leads_server, paid_key, "/v1/me/lotes", {**FILTERS, "quantidade": 10,
                                                                 **missing})  # fmt: skip
        assert refused.status_code == 400, refused.text
        assert "LGPD" in refused.json()["message"]
        named = refused.json()["details"]["campos"]
        assert set(named) == {"confirmar_lgpd", "uso_responsavel"} - {
            name for name, value in missing.items() if value
        }
    starter = post(leads_server, make_key("starter"), "/v1/me/lotes",
                   {**FILTERS, "quantidade": 10, **LGPD})  # fmt: skip
    assert starter.status_code == 403
    assert "plano" in starter.json()["message"]
    nothing = post(leads_server, paid_key, "/v1/me/lotes",
                   {"cnae": RESTAURANT, "uf": "AC", "quantidade": 10, **LGPD})  # fmt: skip
    assert nothing.status_code == 400
    big_pdf = post(leads_server, paid_key, "/v1/me/lotes",
                   {**FILTERS, "quantidade": 10001, "formato": "pdf", **LGPD})  # fmt: skip
    assert big_pdf.status_code == 400
    bad_format = post(leads_server, paid_key, "/v1/me/lotes",
                      {**FILTERS, "quantidade": 10, "formato": "docx", **LGPD})  # fmt: skip
    assert bad_format.status_code == 400
    inside = {**FILTERS, "quantidade": 10, "webhook_url": "https://10.0.0.1/x", **LGPD}
    private = post(leads_server, paid_key, "/v1/me/lotes", inside)
    assert private.status_code == 400
    for field, text in (("objetivo", "restaurantes em SP\x00"), ("segmento", "bares\x00"),
                        ("cidade", "Curitiba\x00")):  # fmt: skip
        nul = post(leads_server, paid_key, "/v1/me/lotes",
                   {**FILTERS, field: text, "quantidade": 10, **LGPD})  # fmt: skip
        assert nul.status_code == 400, nul.text  # PostgreSQL's JSON takes no NUL: it was a 500
        assert nul.json()["details"]["campo"] == field
    for field, text in (("uf", "SP\x00"), ("situacao", "ativa\x00"), ("porte", "me\t")):
        listed = post(leads_server, paid_key, "/v1/me/lotes",
                      {**FILTERS, field: text, "quantidade": 10, **LGPD})  # fmt: skip
        assert listed.status_code == 400, listed.text  # read as the value without it: a 500
        assert listed.json()["details"]["campo"] == field
        counted = get(
            leads_server, paid_key, "/v1/leads/contagem", cnae=RESTAURANT, **{field: text}
        )
        assert counted.status_code == 400, counted.text


def test_allowance_is_taken_atomically(leads_server: Server, make_key: MakeKey) -> None:
    """Eight lots of 300 asked at once on a plan of 1,000 a month: exactly three fit."""
    key = make_key(SMALL_PLAN)
    body = {**FILTERS, "quantidade": 300, **LGPD}
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda _: post(leads_server, key, "/v1/me/lotes", body), range(8)))
    statuses = sorted(answer.status_code for answer in answers)
    assert statuses == [201] * 3 + [403] * 5, [a.text for a in answers]
    refused = next(answer for answer in answers if answer.status_code == 403).json()
    assert refused["details"]["restantes"] in (100, 400, 700)


def test_lot_waits_in_its_alias_queue(
    leads_server: Server, leads_alias: str, make_key: MakeKey, database: str
) -> None:
    """A lot is made from its alias's index into its alias's folder, so only a worker of that
    alias takes it: workers of other aliases on the same database never see it."""
    key = make_key(SMALL_PLAN)
    created = ok(post(leads_server, key, "/v1/me/lotes", {**FILTERS, "quantidade": 1, **LGPD}))
    with psycopg.connect(database) as conn:
        [(queue,)] = conn.execute(
            "SELECT queue_name FROM procrastinate_jobs WHERE args->>'lote_id' = %s",
            (str(created["lote"]["id"]),),
        ).fetchall()
    assert queue == releases.queue_of(leads_alias, "lotes")
    assert queue in releases.queues_of(leads_alias)
    assert queue not in releases.queues_of(leads_alias + "-outro")


# ---------------------------------------------------------------- files


@pytest.mark.parametrize("formato", ["csv", "xlsx", "pdf"])
def test_lot_files_hold_the_ranked_rows(
    leads_server: Server, paid_key: Issued, worker: Worker, formato: str, receiver: Receiver
) -> None:
    hook = f"lote-{formato}"
    created = ok(post(leads_server, paid_key, "/v1/me/lotes",
                      {**FILTERS, "quantidade": 400, "formato": formato,
                       "webhook_url": receiver.url(hook), **LGPD}))  # fmt: skip
    receiver.secrets[hook] = created["segredo"]
    assert created["lote"]["estado"] == "pendente"
    assert created["segredo"].startswith("whsec_")
    lote = wait_lot(leads_server, paid_key, created["lote"]["id"])
    assert lote["linhas"] == 400
    response = download(leads_server, paid_key, lote["id"])
    assert response.status_code == 200
    assert len(response.content) == lote["tamanho"]
    expected = ranked_cnpjs(leads_server, paid_key, 400)
    by_cnpj = {lead.cnpj: lead for lead in LEADS}
    if formato == "csv":
        assert response.headers["content-type"] == "text/csv; charset=utf-8"
        rows = csv_rows(response.content)[1:]
        assert [row[2] for row in rows] == expected
        names = [row[3] for row in rows]
        assert all(by_cnpj[row[2]].name == (row[3][1:] if row[3].startswith("'") else row[3])
                   for row in rows)  # fmt: skip
        assert all(not name.startswith(("=", "+", "-", "@")) for name in names)
        assert any(name.startswith("'=") for name in names)
    elif formato == "xlsx":
        sheet = openpyxl.load_workbook(io.BytesIO(response.content), read_only=True).active
        assert sheet is not None
        cells = list(sheet.iter_rows(min_row=2, values_only=False))
        assert [row[2].value for row in cells] == expected
        assert all(cell.data_type != "f" for row in cells for cell in row)
        assert [row[3].value for row in cells] == [by_cnpj[row[2].value].name for row in cells]
        assert {row[3].value for row in cells} & set(FORMULAS)
    else:
        reader = PdfReader(io.BytesIO(response.content))
        text = "\n".join(page.extract_text() or "" for page in reader.pages)
        positions = [text.find(cnpj) for cnpj in expected]
        assert all(position >= 0 for position in positions)
        assert positions == sorted(positions), "rows in ranking order"
        assert "SÃO JOÃO" in text
        assert "CONCEIÇÃO" in text
        resources: Any = reader.pages[0]["/Resources"]
        fonts = [font.get_object() for font in resources["/Font"].values()]
        assert any("DejaVu" in str(font["/BaseFont"]) for font in fonts)
        descriptors = [font["/FontDescriptor"].get_object() for font in fonts]
        assert descriptors
        assert all("/FontFile2" in item for item in descriptors), "every font is embedded"
    event = receiver.wait(hook, 1)[0]
    assert event.verified is True
    assert event.event["type"] == "lote.concluido"
    assert event.event["data"]["linhas"] == 400
    assert event.event["data"]["download_url"].endswith(f"/v1/me/lotes/{lote['id']}/arquivo")
    until(lambda: wait_lot(leads_server, paid_key, lote["id"])["webhook_estado"] == "entregue")
    with leads_server.client(headers=paid_key.headers) as client:  # the account's delivery log
        log = client.get("/v1/me/monitoramentos/logs", params={"evento": "lote.concluido"}).json()
        listed = {row["id"]: row for row in client.get("/v1/me/lotes").json()["data"]}
    assert listed[lote["id"]]["webhook_estado"] == "entregue"  # the list says what the lot says
    mine = [row for row in log["data"] if row["lote_id"] == lote["id"]]
    assert [(row["monitor_id"], row["status_http"]) for row in mine] == [(None, 200)]
    assert mine[0]["entrega_id"] == event.headers["webhook-id"]


async def _run_expiry(database: str) -> None:
    """Defers the periodic expiry job now (it runs every ten minutes) for the worker to run."""
    app = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=database))
    async with app.open_async():
        await app.configure_task("expirar_lotes", queue="manutencao").defer_async(timestamp=0)


def test_lot_file_is_its_owners_only_and_expires(
    leads_server: Server,
    paid_key: Issued,
    make_key: MakeKey,
    worker: Worker,
    database: str,
    lots_dir: Path,
) -> None:
    ok(post(leads_server, paid_key, "/v1/me/lotes", {**FILTERS, "quantidade": 3, **LGPD}))
    created = ok(post(leads_server, paid_key, "/v1/me/lotes", {**FILTERS, "quantidade": 5, **LGPD}))
    lote = wait_lot(leads_server, paid_key, created["lote"]["id"])
    stranger = make_key("teste-leads")
    assert download(leads_server, stranger, lote["id"]).status_code == 404
    assert get(leads_server, stranger, f"/v1/me/lotes/{lote['id']}").status_code == 404
    theirs = ok(get(leads_server, stranger, "/v1/me/lotes"))
    assert lote["id"] not in [item["id"] for item in theirs["data"]]
    assert theirs["total"] == len(theirs["data"])
    listed = ok(get(leads_server, paid_key, "/v1/me/lotes", limit=1))
    assert listed["data"][0]["id"] >= lote["id"]
    assert listed["next_cursor"]
    ids, page = [], listed
    while True:  # the total is the account's lots, the same on every page
        ids += [item["id"] for item in page["data"]]
        assert page["total"] == listed["total"]
        if not page["next_cursor"]:
            break
        page = ok(get(leads_server, paid_key, "/v1/me/lotes", limit=1, cursor=page["next_cursor"]))
    assert listed["total"] == len(set(ids)) >= 2
    with psycopg.connect(database) as conn:
        conn.execute("UPDATE lotes SET expira_em = now() - interval '1 second' WHERE id = %s",
                     (lote["id"],))  # fmt: skip
    assert download(leads_server, paid_key, lote["id"]).status_code == 410
    # Expired at once, before the expiry job's round: no link to a file that answers 410.
    shown = lot_state(leads_server, paid_key, lote["id"])
    assert (shown["estado"], shown["download_url"]) == ("expirado", None)
    asyncio.run(_run_expiry(database))
    until(lambda: lot_state(leads_server, paid_key, lote["id"])["estado"] == "expirado")
    assert not (lots_dir / f"lote-{lote['id']}.csv").exists()
    assert download(leads_server, paid_key, lote["id"]).status_code == 410
    assert get(leads_server, paid_key, "/v1/me/lotes/99999999999").status_code == 404
    assert get(leads_server, paid_key, "/v1/me/lotes/999999999999999999999").status_code in (
        400,
        404,
    )
