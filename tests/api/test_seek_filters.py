"""Every `/seek` filter over HTTP against the sample's own rows: for a value taken from the data,
the companies the sample says have it are all found (`total` equals the count in the file), and
every company answered has it (checked on its full record)."""

from __future__ import annotations

import csv
import unicodedata
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from stdnum.br import cnpj as oracle

from app.domain import codes
from tests.conftest import SAMPLE, Server


def _read(name: str) -> list[list[str]]:
    with (SAMPLE / name).open(encoding="latin-1", newline="") as stream:
        return list(csv.reader(stream, delimiter=";"))


ROWS = [
    row for row in _read("ESTABELE.csv") if len(row) == 30 and oracle.is_valid("".join(row[:3]))
]
"""The sample's establishments, but for the rows the indexer must refuse (bad check digits,
judged by python-stdnum rather than our own code)."""
EMPRESAS = {row[0]: row for row in _read("EMPRECSV.csv")}


def _cnpj(row: list[str]) -> str:
    return row[0] + row[1] + row[2]


def _secondary(row: list[str]) -> list[str]:
    return [code for code in row[12].split(",") if code]


def _most_common(values: list[str]) -> str:
    return max(set(values), key=values.count)


def _phones(row: list[str]) -> list[tuple[str, str]]:
    return [(row[i].strip(), row[i + 1].strip()) for i in (21, 23, 25) if row[i + 1].strip()]


SECONDARY = _most_common([code for row in ROWS for code in _secondary(row)])
PHONE = next(_phones(row)[0] for row in ROWS if _phones(row))
EMAIL = next(row[27] for row in ROWS if row[27])
DDD = _most_common([ddd for row in ROWS for ddd, _ in _phones(row) if ddd])
NATURE = _most_common([EMPRESAS[row[0]][2] for row in ROWS if row[0] in EMPRESAS])

CASES: list[
    tuple[dict[str, str], Callable[[list[str]], bool], Callable[[dict[str, Any]], bool]]
] = [
    (
        {"cnae": SECONDARY, "cnae_secundario": "true"},
        lambda row: SECONDARY in [row[11], *_secondary(row)],
        lambda record: (
            SECONDARY
            in [
                record["cnae_principal"]["codigo"],
                *(c["codigo"] for c in record["cnaes_secundarios"]),
            ]
        ),
    ),
    (
        {"telefone": PHONE[0] + PHONE[1]},
        lambda row: PHONE in _phones(row),
        lambda record: any(
            (t["ddd"], t["numero"]) == PHONE for t in record["contato"]["telefones"]
        ),
    ),
    (
        {"email": EMAIL.upper()},
        lambda row: row[27].lower() == EMAIL.lower(),
        lambda record: EMAIL.lower() in record["contato"]["emails"],
    ),
    (
        {"ddd": DDD},
        lambda row: any(ddd == DDD for ddd, _ in _phones(row)),
        lambda record: any(t["ddd"] == DDD for t in record["contato"]["telefones"]),
    ),
    (
        {"natureza": NATURE},
        lambda row: row[0] in EMPRESAS and EMPRESAS[row[0]][2] == NATURE,
        lambda record: record["natureza_juridica"]["codigo"] == NATURE,
    ),
    (
        {"uf": "ex"},  # abroad: the addresses Receita gives no federative unit
        lambda row: row[19] == "EX",
        lambda record: record["endereco"]["uf"] == "EX",
    ),
]
"""`simples` and `mei` are not here: the sample's Simples rows are of other companies than its
establishments. A generated month checks them (`tests/indexer/test_generated_month.py`)."""


@pytest.fixture(scope="module")
def api(sample_server: Server) -> Iterator[httpx.Client]:
    with sample_server.client(timeout=30) as client:
        yield client


def _all(api: httpx.Client, params: dict[str, str]) -> tuple[list[str], int]:
    found: list[str] = []
    cursor = None
    while True:
        page = api.get(
            "/v1/seek", params={**params, "limit": 100, **({"cursor": cursor} if cursor else {})}
        )
        assert page.status_code == 200, page.text
        body = page.json()
        found += [item["cnpj"] for item in body["data"]]
        cursor = body["next_cursor"]
        if cursor is None:
            return found, body["total"]


def _records(api: httpx.Client, numbers: list[str]) -> list[dict[str, Any]]:
    records = []
    for start in range(0, len(numbers), 100):
        batch = api.post("/v1/cnpj/lote", json=numbers[start : start + 100]).json()
        records += [item["empresa"] for item in batch["data"]]
    return records


@pytest.mark.parametrize(
    ("params", "in_file", "in_record"), CASES, ids=[next(iter(c[0])) for c in CASES]
)
def test_seek_filter_finds_exactly_the_companies_the_data_has(
    api: httpx.Client,
    params: dict[str, str],
    in_file: Callable[[list[str]], bool],
    in_record: Callable[[dict[str, Any]], bool],
) -> None:
    expected = {_cnpj(row) for row in ROWS if in_file(row)}
    found, total = _all(api, params)
    assert len(found) == len(set(found)) == total
    assert expected, params  # a value the data has
    assert expected <= set(found), sorted(expected - set(found))[:5]
    assert all(in_record(record) for record in _records(api, found))


def test_seek_com_telefone_false_is_the_complement(api: httpx.Client) -> None:
    _, everything = _all(api, {"uf": ",".join(codes.ADDRESS_UFS)})  # all 28 values at once
    with_phone, yes = _all(api, {"com_telefone": "true"})
    without, no = _all(api, {"com_telefone": "false"})
    assert not set(with_phone) & set(without)
    assert yes > 0
    assert no > 0
    assert all(r["contato"]["disponibilidade"]["telefone"] for r in _records(api, with_phone[:200]))
    assert not any(
        r["contato"]["disponibilidade"]["telefone"] for r in _records(api, without[:200])
    )
    assert yes + no == everything


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"ddd": "²³"}, "ddd"),  # superscript digits: `str.isdigit` takes them, no code has them
        ({"ddd": "٤٧"}, "ddd"),
        ({"municipio": "١٢٣٤"}, "municipio"),
        ({"municipio": "12345"}, "municipio"),  # digits, but neither a Receita nor an IBGE code
        ({"telefone": "abc30416395xyz"}, "telefone"),
        ({"telefone": "\uff14730416395"}, "telefone"),  # a full-width 4
        ({"cep": "5353484O"}, "cep"),  # a letter O typed for a zero: not the CEP 53534840
        ({"cep": "rua 5"}, "cep"),
        ({"natureza": "x2062"}, "natureza"),
        ({"matriz": "null"}, "matriz"),  # msgspec reads the text null as no filter at all
        ({"com_email": "Null"}, "com_email"),
        ({"capital_min": "null"}, "capital_min"),
        ({"abertura_ate": "null"}, "abertura_ate"),
    ],
)
def test_seek_codes_of_other_digits_or_lengths_refused(
    api: httpx.Client, params: dict[str, str], field: str
) -> None:
    """Codes are ASCII digits of their own lengths: anything else is a 400 naming the field,
    never a search for something else (a phone without its letters, a town named `12345`)."""
    response = api.get("/v1/seek", params=params)
    assert response.status_code == 400, response.text
    assert response.json()["details"]["campo"] == field


def test_seek_phone_written_with_punctuation_found_as_digits(api: httpx.Client) -> None:
    ddd, number = PHONE
    found = _all(api, {"telefone": ddd + number})
    assert found[1] > 0
    written = f"({ddd}) {number[:-4]}-{number[-4:]}" if ddd else f"{number[:-4]}-{number[-4:]}"
    assert _all(api, {"telefone": written}) == found


CITY_NAMES = {row[0]: row[1] for row in _read("MUNICCSV.csv")}


def _folded(name: str) -> str:
    return unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().upper().strip()


@pytest.mark.parametrize("city", ["Fortaleza", "goiânia", "São Luís", "VITORIA"])
def test_seek_city_by_name_is_that_city_not_longer_names_with_its_words(
    api: httpx.Client, city: str
) -> None:
    """`municipio` by name is the whole name (any case, accents optional): Fortaleza is not
    Fortaleza dos Nogueiras, Goiânia is not Aparecida de Goiânia, though the data has both."""
    name = _folded(city)
    expected = {_cnpj(row) for row in ROWS if CITY_NAMES.get(row[20]) == name}
    with_its_words = {
        _cnpj(row) for row in ROWS if set(name.split()) <= set(CITY_NAMES.get(row[20], "").split())
    }
    assert expected
    assert with_its_words > expected
    found, total = _all(api, {"municipio": city})
    assert set(found) == expected
    assert total == len(expected)


def test_seek_city_by_a_word_of_its_name_finds_none(api: httpx.Client) -> None:
    found, total = _all(api, {"municipio": "paulo"})
    assert (found, total) == ([], 0)
    found, total = _all(api, {"municipio": "sao paulo", "uf": "sp"})
    assert total == len({_cnpj(row) for row in ROWS if CITY_NAMES.get(row[20]) == "SAO PAULO"})
