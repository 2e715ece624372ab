"""A generated month with tax regimes and alphanumeric CNPJs, loaded and served: every face finds
what the files hold.

The expectations are read from the generated files themselves (zips of Receita-format CSVs)
with the standard library, never from the indexer or the app: which establishments a regime
filter must return, which CNPJs are alphanumeric, how many establishments a city has.
"""

from __future__ import annotations

import csv
import io
import subprocess
import sys
import zipfile
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from indexer.load import LoadReport
from tests.conftest import ROOT, Server, serving

ESTABLISHMENTS = 3000
ALPHANUMERIC_SHARE = 0.15
REGIME_WORDS = {
    "lucro_real": "REAL",
    "lucro_presumido": "PRESUMIDO",
    "lucro_arbitrado": "ARBITRADO",
    "imune": "IMUNE",
    "isenta": "ISENTA",
}
"""The filter values and the word of Receita's `forma_de_tributacao` each stands for (the
documented contract of `regime_tributario`, `docs/api.md`)."""


@dataclass
class Files:
    """What the generated month's files say, read with `csv` and `zipfile` alone."""

    establishments: dict[str, list[str]] = field(default_factory=dict)
    """CNPJ -> its Estabelecimentos row."""
    by_root: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    partners: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    regimes: dict[str, list[tuple[int, str]]] = field(default_factory=lambda: defaultdict(list))
    """Company root -> (year, forma) rows."""
    simples: dict[str, list[str]] = field(default_factory=dict)
    """Company root -> its Simples row (opção pelo Simples in column 1, pelo MEI in 4)."""

    def opting(self, column: int) -> set[str]:
        """The establishments whose company's Simples row says `S` in `column`."""
        return {
            number
            for number, row in self.establishments.items()
            if row[0] in self.simples and self.simples[row[0]][column] == "S"
        }

    def newest_forms(self, root: str) -> list[str]:
        rows = self.regimes.get(root, [])
        if not rows:
            return []
        newest = max(year for year, _ in rows)
        return [form for year, form in rows if year == newest]

    def with_regime(self, value: str) -> set[str]:
        word = REGIME_WORDS[value]
        return {
            number
            for number, row in self.establishments.items()
            if any(word in form for form in self.newest_forms(row[0]))
        }


def _rows(path: Path, delimiter: str = ";") -> Iterator[list[str]]:
    with zipfile.ZipFile(path) as archive:
        for member in archive.namelist():
            with archive.open(member) as raw:
                text = io.TextIOWrapper(raw, encoding="latin-1", newline="")
                yield from csv.reader(text, delimiter=delimiter)


def read_files(folder: Path) -> Files:
    files = Files()
    for path in sorted(folder.glob("Estabelecimentos*.zip")):
        for row in _rows(path):
            number = "".join(row[:3])
            files.establishments[number] = row
            files.by_root[row[0]].append(number)
    for path in sorted(folder.glob("Socios*.zip")):
        for row in _rows(path):
            files.partners[row[0]] += 1
    for path in sorted(folder.glob("Simples*.zip")):
        for row in _rows(path):
            files.simples[row[0]] = row
    for name in ("Lucro Real", "Lucro Presumido", "Lucro Arbitrado", "Imunes e Isentas"):
        for row in list(_rows(folder / f"{name}.zip", ","))[1:]:
            root = row[1].replace(".", "").replace("/", "").replace("-", "")[:8]
            files.regimes[root].append((int(row[0]), row[3]))
    return files


@pytest.fixture(scope="module")
def month(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("generated") / "2026-10"
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "generate_month.py"), str(folder),
         "--establishments", str(ESTABLISHMENTS), "--parts", "2", "--seed", "5",
         "--alfanumericos", str(ALPHANUMERIC_SHARE)],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    return folder


@pytest.fixture(scope="module")
def files(month: Path) -> Files:
    found = read_files(month)
    assert len(found.establishments) == ESTABLISHMENTS
    assert found.regimes, "the generator wrote no tax regime"
    return found


@pytest.fixture(scope="module")
def loaded(
    month: Path, load: Callable[..., LoadReport], new_alias: Callable[[], str]
) -> tuple[str, LoadReport]:
    alias = new_alias()
    report = load(month, alias)
    return alias, report


@pytest.fixture(scope="module")
def server(loaded: tuple[str, LoadReport]) -> Iterator[Server]:
    with serving(loaded[0]) as running:
        yield running


@pytest.fixture(scope="module")
def api(server: Server) -> Iterator[httpx.Client]:
    with server.client() as client:
        yield client


def _walk(api: httpx.Client, path: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    """Every item of a paged list."""
    items: list[dict[str, Any]] = []
    cursor = None
    while True:
        answer = api.get(path, params={**params, **({"cursor": cursor} if cursor else {})})
        assert answer.status_code == 200, answer.text
        page = answer.json()
        items.extend(page["data"])
        cursor = page["next_cursor"]
        if cursor is None:
            return items


def test_load_reads_every_regime_row_and_dates_the_release(
    loaded: tuple[str, LoadReport], files: Files
) -> None:
    _, report = loaded
    by_kind: dict[str, int] = defaultdict(int)
    for item in report.files:
        by_kind[item.kind] += item.rows
    assert by_kind["regimes"] == sum(len(rows) for rows in files.regimes.values())
    assert report.bad_rows == 0, report.bad_rows_by_reason
    assert report.documents_written == ESTABLISHMENTS
    # The folder is named after its month, as Receita names them.
    assert report.data_referencia == "2026-10-01"
    assert report.carregada_em is not None


@pytest.mark.parametrize("value", sorted(REGIME_WORDS))
def test_seek_by_regime_returns_exactly_the_matching_establishments(
    api: httpx.Client, files: Files, value: str
) -> None:
    found = _walk(api, "/v1/seek", {"regime_tributario": value, "limit": 100})
    numbers = [item["cnpj"] for item in found]
    assert files.with_regime(value), f"the generated month has no {value}"
    assert len(numbers) == len(set(numbers))
    assert set(numbers) == files.with_regime(value)


@pytest.mark.parametrize(("name", "column"), [("simples", 1), ("mei", 4)])
def test_seek_by_simples_or_mei_returns_exactly_the_opting_establishments(
    api: httpx.Client, files: Files, name: str, column: int
) -> None:
    expected = files.opting(column)
    assert expected, f"the generated month has no {name} company"
    found = _walk(api, "/v1/seek", {name: "true", "limit": 100})
    assert {item["cnpj"] for item in found} == expected
    assert len(found) == len(expected)


def test_regime_filter_takes_any_of_several_and_refuses_unknown(
    api: httpx.Client, files: Files
) -> None:
    found = _walk(api, "/v1/seek", {"regime_tributario": "imune,isenta", "limit": 100})
    assert {item["cnpj"] for item in found} == files.with_regime("imune") | files.with_regime(
        "isenta"
    )
    refused = api.get("/v1/seek", params={"regime_tributario": "simples"})
    assert refused.status_code == 400
    assert refused.json()["details"]["campo"] == "regime_tributario"


def test_record_lists_the_company_regimes_newest_first(api: httpx.Client, files: Files) -> None:
    root = next(root for root, rows in sorted(files.regimes.items()) if len(rows) > 1)
    expected = sorted(files.regimes[root], reverse=True)
    for number in files.by_root[root]:
        record = api.get(f"/v1/cnpj/{number}").json()
        assert [
            (item["ano"], item["forma_de_tributacao"]) for item in record["regime_tributario"]
        ] == expected
        assert all(item["cnpj_da_scp"] is None for item in record["regime_tributario"])
        assert all(item["quantidade_de_escrituracoes"] == 1 for item in record["regime_tributario"])
    without = next(n for n, row in files.establishments.items() if row[0] not in files.regimes)
    assert api.get(f"/v1/cnpj/{without}").json()["regime_tributario"] == []


def test_agent_tool_and_lead_count_take_the_regime_filter(api: httpx.Client, files: Files) -> None:
    expected = files.with_regime("lucro_presumido")
    called = api.post(
        "/mcp",
        json={
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "buscar_empresas",
                       "arguments": {"regime_tributario": "lucro_presumido", "limit": 100}},
        },
    ).json()  # fmt: skip
    content = called["result"]["structuredContent"]
    assert content["total"] == len(expected)
    assert {item["cnpj"] for item in content["data"]} <= expected
    uf = "SP"
    active_in_uf = {
        n
        for n in expected
        if files.establishments[n][19] == uf and files.establishments[n][5] == "02"
    }
    counted = api.get(
        "/v1/leads/contagem", params={"uf": uf, "regime_tributario": "lucro_presumido"}
    )
    assert counted.status_code == 200, counted.text
    assert counted.json()["total"] == len(active_in_uf)


def _alphanumeric(files: Files) -> tuple[str, list[str]]:
    """An alphanumeric establishment whose company has partners, and its row."""
    for number, row in sorted(files.establishments.items()):
        if not number.isdigit() and files.partners.get(row[0]):
            return number, row
    raise AssertionError("the generated month has no alphanumeric establishment with partners")


def _formatted(number: str) -> str:
    return f"{number[:2]}.{number[2:5]}.{number[5:8]}/{number[8:12]}-{number[12:]}"


def test_alphanumeric_cnpjs_found_through_every_face(api: httpx.Client, files: Files) -> None:
    alphanumeric = [n for n in files.establishments if not n.isdigit()]
    assert len(alphanumeric) > ESTABLISHMENTS * ALPHANUMERIC_SHARE / 2
    assert any(not n[8:12].isdigit() for n in alphanumeric), "no letter in any order"
    number, row = _alphanumeric(files)
    for spelling in (number, number.lower(), _formatted(number), _formatted(number).lower()):
        answer = api.get(f"/v1/cnpj/{spelling}")
        assert answer.status_code == 200, (spelling, answer.text)
        assert answer.json()["cnpj"] == number
    checked = api.get(f"/v1/cnpj/validar/{_formatted(number).lower()}").json()
    assert checked["valido"] is True
    batch = api.post("/v1/cnpj/lote", json=[number.lower(), _formatted(alphanumeric[1])]).json()
    assert [item["status"] for item in batch["data"]] == ["encontrado", "encontrado"]
    assert [item["cnpj"] for item in batch["data"]] == [number, alphanumeric[1]]
    by_cep = _walk(api, "/v1/seek", {"cep": row[18], "limit": 100})
    assert number in {item["cnpj"] for item in by_cep}
    partners = api.get(f"/v1/socios/{number.lower()}")
    assert partners.status_code == 200, partners.text
    assert len(partners.json()["socios"]) == files.partners[row[0]]


def test_city_catalog_counts_alphanumeric_establishments(api: httpx.Client, files: Files) -> None:
    _, row = _alphanumeric(files)
    city = row[20]
    expected = sum(1 for r in files.establishments.values() if r[20] == city)
    found = api.get("/v1/search/cidade", params={"query": city}).json()
    counts = [item for item in found["data"] if item["codigo"] == city]
    assert len(counts) == 1
    assert counts[0]["empresas"] == expected
