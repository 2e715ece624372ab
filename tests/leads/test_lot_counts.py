"""Issue 14, "counts equal the number of rows in every file": a lot asked for more leads than
match holds exactly the matching companies, in CSV, XLSX and PDF alike: as many rows as
`/v1/leads/contagem` counts, and the companies the release's oracle picks. And the unprefixed
`/me/lotes` routes answer like their `/v1` twins."""

from __future__ import annotations

import io
import re

import openpyxl
import pytest
from pypdf import PdfReader

from tests.conftest import Issued, Server
from tests.leads.conftest import get, ok, wait_lot
from tests.leads.release import LEADS, RESTAURANT
from tests.leads.test_lots import LGPD, csv_rows, download, post
from tests.peers import Worker

FILTERS = {"cnae": RESTAURANT, "uf": "RJ"}
CNPJ = re.compile(r"(?<!\d)\d{14}(?!\d)")


def _expected() -> set[str]:
    """The oracle: active companies in RJ with a restaurant as primary or secondary activity."""
    return {
        lead.cnpj for lead in LEADS
        if lead.active and lead.uf == "RJ" and RESTAURANT in (lead.cnae, lead.secondary)
    }  # fmt: skip


def _cnpjs_in(formato: str, content: bytes) -> list[str]:
    """The CNPJ of every data row of a lot's file, read back by a reader of the format."""
    if formato == "csv":
        return [row[2] for row in csv_rows(content)[1:]]
    if formato == "xlsx":
        sheet = openpyxl.load_workbook(io.BytesIO(content), read_only=True).active
        assert sheet is not None
        return [str(row[2]) for row in sheet.iter_rows(min_row=2, values_only=True)]
    reader = PdfReader(io.BytesIO(content))
    return CNPJ.findall("\n".join(page.extract_text() or "" for page in reader.pages))


@pytest.mark.parametrize("formato", ["csv", "xlsx", "pdf"])
def test_lot_larger_than_the_match_count_rows_equal_the_count(
    leads_server: Server, paid_key: Issued, worker: Worker, formato: str
) -> None:
    counted = ok(get(leads_server, paid_key, "/v1/leads/contagem", **FILTERS))
    expected = _expected()
    assert counted["total"] == len(expected) > 100
    body = {**FILTERS, "quantidade": counted["total"] + 37, "formato": formato, **LGPD}
    created = ok(post(leads_server, paid_key, "/v1/me/lotes", body))
    lote = wait_lot(leads_server, paid_key, created["lote"]["id"])
    assert lote["quantidade"] == counted["total"] + 37
    assert lote["linhas"] == counted["total"]
    response = download(leads_server, paid_key, lote["id"])
    assert response.status_code == 200
    cnpjs = _cnpjs_in(formato, response.content)
    assert len(cnpjs) == counted["total"]
    assert set(cnpjs) == expected


def test_unprefixed_lot_routes_answer_like_their_v1_twins(
    leads_server: Server, paid_key: Issued, worker: Worker
) -> None:
    created = ok(post(leads_server, paid_key, "/me/lotes", {**FILTERS, "quantidade": 7, **LGPD}))
    lote_id = created["lote"]["id"]
    assert created["lote"]["estado"] == "pendente"
    lote = wait_lot(leads_server, paid_key, lote_id)
    assert lote["linhas"] == 7
    assert ok(get(leads_server, paid_key, f"/me/lotes/{lote_id}")) == lote
    listed = ok(get(leads_server, paid_key, "/me/lotes", limit=5))
    assert listed == ok(get(leads_server, paid_key, "/v1/me/lotes", limit=5))
    assert lote_id in [item["id"] for item in listed["data"]]
    file = get(leads_server, paid_key, f"/me/lotes/{lote_id}/arquivo")
    assert file.status_code == 200
    assert file.content == download(leads_server, paid_key, lote_id).content
    assert len(csv_rows(file.content)) == 1 + 7
    refused = post(leads_server, paid_key, "/me/lotes", {**FILTERS, "quantidade": 7})
    assert refused.status_code == 400
    assert set(refused.json()["details"]["campos"]) == {"confirmar_lgpd", "uso_responsavel"}
