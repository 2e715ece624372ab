"""A value that is not what its column holds is set aside, and its row loaded without it: the
company is served, the garbage is not indexed as data, and the report counts and lists it."""

from __future__ import annotations

import csv
import io
import shutil
from collections.abc import Callable
from pathlib import Path

from elasticsearch import Elasticsearch
from hypothesis import given
from hypothesis import strategies as st

from indexer import values
from indexer.reader import Row, read_rows
from indexer.sources import COLUMNS, Kind, scan
from indexer.values import VALUE_CHECKS
from tests.conftest import PEER_DATA, RECEITA_SAMPLE, SAMPLE, Loader, stored

ESTABLISHMENT = [
    "13810056", "0001", "53", "1", "MISTER - SERVICE", "08", "20161125", "01", "", "",
    "19851122", "4930202", "7711000,8541400", "AVENIDA", "SANTANA", "390", "ANDAR 1", "CENTRO",
    "46400000", "BA", "3403", "77", "34544064", "77", "34542378", "", "", "a@b.com.br", "", "",
]  # fmt: skip
"""A real row of the sample (`fixtures/sample/ESTABELE.csv`)."""


def _row(fields: list[str], kind: Kind = Kind.ESTABELECIMENTOS) -> Row:
    buffer = io.StringIO()
    csv.writer(buffer, delimiter=";", quoting=csv.QUOTE_ALL, lineterminator="\n").writerow(fields)
    [row] = read_rows(io.BytesIO(buffer.getvalue().encode("latin-1")), "f", kind)
    assert isinstance(row, Row)
    return row


def _changed(fields: list[str], **values: str) -> list[str]:
    columns = {"situacao_data": 6, "abertura": 10, "cnae": 11, "secundarias": 12, "cep": 18,
               "uf": 19, "municipio": 20, "matriz": 3, "especial_data": 29}  # fmt: skip
    changed = list(fields)
    for name, value in values.items():
        changed[columns[name]] = value
    return changed


def test_a_real_row_loads_as_it_is() -> None:
    row = _row(ESTABLISHMENT)
    assert row.set_aside is None
    assert row.fields == ESTABLISHMENT


def test_values_not_of_their_column_are_set_aside_and_the_row_kept() -> None:
    row = _row(
        _changed(
            ESTABLISHMENT,
            abertura="20231399",  # no 99th of a month
            situacao_data="2016-11-25",
            cnae="ABC",
            secundarias="7711000,ABC,8541400",
            cep="ABCDEFGH",
            uf="ZZ",
            municipio="34O3",  # a letter O for a zero
        )
    )
    reasons = [reason for reason, _ in row.set_aside or []]
    assert reasons == [
        "invalid data_situacao_cadastral",
        "invalid data_inicio_atividade",
        "invalid municipio",
        "invalid cnae_fiscal_principal",
        "invalid cnae_fiscal_secundaria",
        "invalid cep",
        "invalid uf",
    ]
    fields = row.fields
    assert (fields[6], fields[10], fields[11], fields[18], fields[19], fields[20]) == ("",) * 6
    assert fields[12] == "7711000,8541400"  # the valid codes stay
    assert fields[:3] == ESTABLISHMENT[:3]
    assert "'20231399': no such date (YYYYMMDD)" in dict(row.set_aside or [])[reasons[1]]


def test_other_spellings_of_the_same_value_are_written_as_receita_does() -> None:
    row = _row(_changed(ESTABLISHMENT, cep="46.400-000", uf="ba", abertura="0"))
    assert row.set_aside is None
    assert (row.fields[18], row.fields[19], row.fields[10]) == ("46400000", "BA", "0")


def test_a_date_between_spaces_is_read_unspaced() -> None:
    row = _row(_changed(ESTABLISHMENT, abertura=" 19851122 "))
    assert row.set_aside is None
    assert row.fields[10] == "19851122"


def test_codes_the_tables_lack_are_kept_and_only_their_form_is_checked() -> None:
    """Receita's own files hold situação 07 and matriz 3, named by no table."""
    assert _row(_changed(ESTABLISHMENT, matriz="3")).set_aside is None
    assert _row(_changed(ESTABLISHMENT, matriz="X")).set_aside == [
        ("invalid identificador_matriz_filial", "'X': a code is 1 to 8 digits; the row is "
         "loaded without it"),
    ]  # fmt: skip


def test_a_simples_file_holding_company_rows_sets_every_option_aside() -> None:
    company = ["13810056", "MISTER SERVICE LTDA", "2062", "49", "1000,00", "01", ""]
    row = _row(company, Kind.SIMPLES)
    assert [reason for reason, _ in row.set_aside or []] == [
        "invalid opcao_simples",
        "invalid opcao_mei",
        "invalid data_opcao_simples",
        "invalid data_exclusao_simples",
        "invalid data_opcao_mei",
    ]


def test_companies_and_partners_values_are_checked() -> None:
    company = _row(["13810056", "X LTDA", "20 62", "49", "1E+400", "01", ""], Kind.EMPRESAS)
    assert [reason for reason, _ in company.set_aside or []] == [
        "invalid natureza_juridica",
        "invalid capital_social",
    ]
    partner = ["13810056", "2", "FULANO", "***123456**", "49", "20231301", "", "", "", "00", "5"]
    assert [reason for reason, _ in _row(partner, Kind.SOCIOS).set_aside or []] == [
        "invalid data_entrada_sociedade"
    ]


def test_no_value_of_receitas_real_files_is_set_aside() -> None:
    for folder in (RECEITA_SAMPLE, PEER_DATA, SAMPLE):
        recognised, _ = scan(folder)
        for item in recognised:
            with item.source.open() as stream:
                for row in read_rows(stream, item.source.name, item.kind):
                    if isinstance(row, Row):
                        assert row.set_aside is None, (item.source.name, row.line, row.set_aside)


def test_a_load_serves_the_company_without_the_values_set_aside(
    load: Loader, new_alias: Callable[[], str], es: Elasticsearch, tmp_path: Path
) -> None:
    release = tmp_path / "release"
    shutil.copytree(SAMPLE, release)
    establishments = release / "ESTABELE.csv"
    lines = establishments.read_bytes().splitlines(keepends=True)
    garbled = _changed(ESTABLISHMENT, abertura="20231399", uf="ZZ", cep="46.400-000")
    garbled[5], garbled[3] = "07", "3"  # codes no table names: kept, and counted
    assert lines[0].startswith(b'"13810056";"0001";"53"')
    buffer = io.StringIO()
    csv.writer(buffer, delimiter=";", quoting=csv.QUOTE_ALL, lineterminator="\n").writerow(garbled)
    establishments.write_bytes(buffer.getvalue().encode("latin-1") + b"".join(lines[1:]))
    alias = new_alias()
    report = load(release, alias)
    assert report.live
    assert report.values_set_aside == 2
    assert report.values_set_aside_by_reason == {
        "invalid data_inicio_atividade": 1,
        "invalid uf": 1,
    }
    assert [(v.file, v.line) for v in report.values_set_aside_sample] == [("ESTABELE.csv", 1)] * 2
    assert report.bad_rows_by_reason == {"invalid CNPJ": 6}  # the sample's own, not these
    record = stored(es, alias, "13810056000153")
    assert record is not None
    assert record.get("abertura") is None
    assert record["endereco"].get("uf") is None
    assert record["endereco"]["cep"] == "46400000"
    assert record["situacao_cadastral"]["codigo"] == "07"
    assert record["situacao_cadastral"].get("descricao") is None
    assert record["matriz_filial"] == {"codigo": "3", "descricao": None}
    missing = report.missing_reference_codes
    assert (missing["situacao_cadastral:07"], missing["matriz_filial:3"]) == (1, 1)
    assert (record["nome_fantasia"], record["cnae_principal"]["codigo"]) == (
        "MISTER - SERVICE",
        "4930202",
    )  # the rest of the row as it was
    assert report.bad_rows_file is not None
    with Path(report.bad_rows_file).open(encoding="utf-8") as listing:
        listed = [row[:3] for row in csv.reader(listing)]
    assert ["ESTABELE.csv", "1", "invalid uf"] in listed


SLOW_CHECKS = {
    Kind.ESTABELECIMENTOS: values._establishment,
    Kind.EMPRESAS: values._company,
    Kind.SOCIOS: values._partner,
    Kind.SIMPLES: values._simples,
}
"""The checks field by field, which decide for a row the fast path does not take."""
value_text = st.one_of(
    st.sampled_from(["", "0", "00000000", "20240229", "20230229", "19000101", "SP", "ex", "S"]),
    st.text(alphabet="0123456789,.-/ SNAZaz\x1f٣", max_size=18),
)


REAL_ROWS = {
    Kind.ESTABELECIMENTOS: ESTABLISHMENT,
    Kind.EMPRESAS: ["13810056", "X LTDA", "2062", "49", "1000,00", "01", ""],
    Kind.SOCIOS: ["13810056", "2", "FULANO", "***123456**", "49", "20200101", "", "", "", "00",
                  "5"],
    Kind.SIMPLES: ["13810056", "S", "20070701", "00000000", "N", "00000000", "00000000"],
}  # fmt: skip


@given(
    st.sampled_from(list(VALUE_CHECKS)),
    st.dictionaries(st.integers(min_value=1, max_value=29), value_text, max_size=3),
)
def test_the_fast_path_takes_no_value_the_checks_would_set_aside_or_respell(
    kind: Kind, changes: dict[int, str]
) -> None:
    """A row the joined match takes is one the checks field by field leave as it is. (A row it
    does not take goes to those checks, which may respell it in place: only a row left as it
    was and with nothing set aside can have been taken.)"""
    row = list(REAL_ROWS[kind])
    for at, value in changes.items():
        row[at % COLUMNS[kind]] = value
    checked = list(row)
    if VALUE_CHECKS[kind](checked) is None and checked == row:
        slow = list(row)
        assert SLOW_CHECKS[kind](slow) is None, slow
        assert slow == row
