"""How fresh the data is, and the tax regime of the peer's SERPRO release.

The release's reference date is the first day of its month when the folder is named like
Receita's monthly folders (`2026-10/`), else the latest situação date in its establishment
files; the index keeps it with the load time, `/v1/status` shows both, every record carries
its release's date and lookups and searches say it in `X-Data-Referencia`. Expectations are read
from the release files with the standard library.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import subprocess
import zipfile
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from elasticsearch import Elasticsearch

from app.monitoring.diff import changes
from indexer import documents, elastic
from indexer.load import data_referencia
from tests.conftest import PEER_DATA, RECEITA_SAMPLE, ROOT, SERPRO, Loader, Server

HEADER = "X-Data-Referencia"


def _latest_situation_date(folder: Path) -> str:
    """The latest situação date (column 7) of the establishment files, as `YYYY-MM-DD`."""
    today = dt.date.today().strftime("%Y%m%d")
    dates = []
    for path in folder.glob("Estabelecimentos*.zip"):
        with zipfile.ZipFile(path) as archive:
            for member in archive.namelist():
                text = io.TextIOWrapper(archive.open(member), encoding="latin-1", newline="")
                dates.extend(row[6] for row in csv.reader(text, delimiter=";") if row)
    latest = max(date for date in dates if date <= today)
    return f"{latest[:4]}-{latest[4:6]}-{latest[6:]}"


def test_status_record_and_headers_name_the_release(api: httpx.Client) -> None:
    expected = _latest_situation_date(PEER_DATA)
    status = api.get("/v1/status").json()["index"]
    assert status["data_referencia"] == expected
    loaded = dt.datetime.fromisoformat(status["carregada_em"])
    assert dt.timedelta(0) <= dt.datetime.now(dt.UTC) - loaded < dt.timedelta(hours=6)
    assert status["documents"] == 1
    record = api.get(f"/v1/cnpj/{SERPRO}")
    assert record.json()["data_referencia"] == expected
    assert record.headers[HEADER] == expected
    unchanged = api.get(f"/v1/cnpj/{SERPRO}", headers={"If-None-Match": record.headers["ETag"]})
    assert unchanged.status_code == 304
    assert unchanged.headers[HEADER] == expected
    found = api.get("/v1/search", params={"q": "servico federal processamento"})
    assert found.json()["data"][0]["cnpj"] == SERPRO
    assert found.headers[HEADER] == found.json()["data_referencia"] == expected
    empty = api.get("/v1/seek", params={"uf": "AC"})
    assert empty.json()["total"] == 0
    assert empty.headers[HEADER] == expected


def _regime_rows(path: Path) -> list[dict[str, str]]:
    with zipfile.ZipFile(path) as archive:
        (member,) = archive.namelist()
        text = io.TextIOWrapper(archive.open(member), encoding="latin-1", newline="")
        return list(csv.DictReader(text))


def test_serpro_shows_its_lucro_presumido_row(api: httpx.Client, api_server: Server) -> None:
    rows = [
        row
        for row in _regime_rows(PEER_DATA / "Lucro Presumido.zip")
        if row["cnpj"].replace(".", "").replace("/", "").replace("-", "") == SERPRO
    ]
    assert len(rows) == 1
    regime = api.get(f"/v1/cnpj/{SERPRO}").json()["regime_tributario"]
    assert regime == [
        {
            "ano": int(rows[0]["ano"]),
            "forma_de_tributacao": rows[0]["forma_de_tributacao"],
            "cnpj_da_scp": None,
            "quantidade_de_escrituracoes": int(rows[0]["quantidade_de_escrituracoes"]),
        }
    ]
    with api_server.client(headers={}) as anonymous:
        public = anonymous.get(f"/v1/cnpj/{SERPRO}").json()
    assert "socios" in public["restrito"]
    assert public["regime_tributario"] == regime
    by_regime = api.get("/v1/seek", params={"regime_tributario": "lucro_presumido"}).json()
    assert [item["cnpj"] for item in by_regime["data"]] == [SERPRO]
    assert api.get("/v1/seek", params={"regime_tributario": "lucro_real"}).json()["total"] == 0


def test_reference_date_from_month_folder_or_files(tmp_path: Path) -> None:
    month = tmp_path / "2026-10"
    month.mkdir()
    assert data_referencia(month, None, "20260915") == "2026-10-01"
    assert data_referencia(month / "Estabelecimentos0.zip", None, "") == "2026-10-01"
    assert data_referencia(tmp_path / "x", "2025-02", "20260915") == "2025-02-01"
    assert data_referencia(PEER_DATA, None, "20221014") == "2022-10-14"
    assert data_referencia(PEER_DATA, None, "") is None
    # A date-like name that is not a month, or a month of an ancestor folder, is not the
    # release's month.
    assert data_referencia(tmp_path / "2026-13", None, "20260915") == "2026-09-15"
    (month / "extracted").mkdir()
    assert data_referencia(month / "extracted", None, "20260915") == "2026-09-15"


def test_reload_of_the_same_data_changes_no_record_hash(
    load: Loader, new_alias: Callable[[], str], es: Elasticsearch, tmp_path: Path
) -> None:
    alias = new_alias()
    first = load(PEER_DATA, alias)
    second = load(PEER_DATA, alias, month="2030-01")
    assert (second.changed, second.unchanged) == (0, 1)
    assert second.data_referencia == "2030-01-01"
    assert first.data_referencia != second.data_referencia
    found = es.search(index=alias, query={"term": {"cnpj": SERPRO}})["hits"]["hits"]
    assert found[0]["_source"]["data_referencia"] == "2030-01-01"


def test_monitor_diff_ignores_the_release_date_and_a_list_new_and_empty() -> None:
    old = {"cnpj": SERPRO, "data_referencia": "2026-09-01", "socios": []}
    new = {**old, "data_referencia": "2026-10-01", "regime_tributario": []}
    assert changes(old, new) == []
    grown = {**new, "regime_tributario": [{"ano": 2025, "forma_de_tributacao": "LUCRO REAL"}]}
    (change,) = changes(old, grown)
    assert change.campo == "regime_tributario"


def test_load_of_which_elasticsearch_takes_nothing_never_goes_live(
    load: Loader, new_alias: Callable[[], str], es: Elasticsearch, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every document refused (here: a mapping that lacks a field the records carry) is a
    failed load: the alias keeps its release, the new index is deleted."""
    alias = new_alias()
    live = load(PEER_DATA, alias)
    mapping = elastic.load_mapping()
    del mapping["mappings"]["properties"]["data_referencia"]
    monkeypatch.setattr(elastic, "load_mapping", lambda: mapping)
    with pytest.raises(elastic.LoadError, match="accepted none"):
        load(PEER_DATA, alias)
    assert elastic.alias_targets(es, alias) == [live.index]
    assert [info.name for info in elastic.list_indices(es, alias)] == [live.index]


def test_load_of_which_elasticsearch_refuses_some_documents_never_goes_live(
    load: Loader, new_alias: Callable[[], str], es: Elasticsearch, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Some documents refused (here: a capital field too small for most companies' capital)
    is a failed load too: a release that lacks companies of its month never goes live."""
    alias = new_alias()
    live = load(PEER_DATA, alias)
    mapping = elastic.load_mapping()
    mapping["mappings"]["properties"]["capital_social"] = {"type": "byte"}
    monkeypatch.setattr(elastic, "load_mapping", lambda: mapping)
    with pytest.raises(elastic.LoadError, match=r"rejected \d+ of the documents"):
        load(RECEITA_SAMPLE, alias)
    assert elastic.alias_targets(es, alias) == [live.index]
    assert [info.name for info in elastic.list_indices(es, alias)] == [live.index]


def test_a_share_capital_past_any_on_record_is_read_as_unknown() -> None:
    """`1e400` would be an infinite double, which Elasticsearch refuses with the document."""
    assert documents.capital("1e400") is None
    assert documents.capital("999999999999999,99") is not None
    assert documents.capital("1000000000000000,00") is None


def test_indexer_command_ends_cleanly(api_server: Server, new_alias: Callable[[], str]) -> None:
    """No `nanobind: leaked ...` dump from DuckDB's bindings after the report."""
    done = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "indexer"), "load", str(PEER_DATA), "--alias", new_alias(),
         "--no-records"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "1 documents written" in done.stderr + done.stdout
    assert "nanobind" not in done.stderr + done.stdout
