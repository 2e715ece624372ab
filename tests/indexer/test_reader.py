from __future__ import annotations

import csv
import io
import string
from itertools import pairwise
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from app.domain.codes import UFS
from indexer.reader import BadRow, Row, read_rows, stage
from indexer.sources import COLUMNS, Kind, scan
from tests.conftest import RECEITA_SAMPLE, ROOT

TEST_ROWS = {f"990000{n:02d}0001" for n in range(1, 7)}


def _lines(path: str) -> int:
    with open(path, "rb") as stream:
        return sum(1 for line in stream if line.strip())


def test_read_rows_receita_sample_every_row_parses() -> None:
    recognised, ignored = scan(RECEITA_SAMPLE)
    # Receita publishes no state registrations: that file is ours (see the next test); the
    # sample holds no tax-regime file (the peer's test data does: `test_sources.py`).
    assert {item.kind for item in recognised} == set(Kind) - {Kind.INSCRICOES, Kind.REGIMES}
    assert [item.source.name for item in ignored] == ["PROVENANCE.md"]
    for item in recognised:
        with item.source.open() as stream:
            rows = list(read_rows(stream, item.source.name, item.kind))
        good = [row for row in rows if isinstance(row, Row)]
        bad = [row for row in rows if isinstance(row, BadRow)]
        assert len(rows) == _lines(str(item.source.path)), item.source.name
        assert all(len(row.fields) == COLUMNS[item.kind] for row in good)
        if item.kind is Kind.ESTABELECIMENTOS:
            # The upstream project's six test rows carry invalid check digits.
            assert {b.reason for b in bad} == {"invalid CNPJ"}
            assert {b.detail[1:15] for b in bad} == {c[:12] + "00" for c in TEST_ROWS}
            assert len(good) == 2000
        else:
            assert bad == [], item.source.name


def test_read_rows_shipped_registrations_all_valid() -> None:
    path = ROOT / "fixtures" / "sample" / "INSCRICOES.ESTADUAIS.csv"
    with path.open("rb") as stream:
        rows = list(read_rows(stream, path.name, Kind.INSCRICOES))
    assert len(rows) == _lines(str(path)) > 1000
    assert all(isinstance(row, Row) for row in rows)
    assert {stage(Kind.INSCRICOES, row.fields)[2] for row in rows if isinstance(row, Row)} <= set(
        UFS
    )


def test_read_rows_latin1_text_decoded() -> None:
    recognised, _ = scan(RECEITA_SAMPLE)
    cnaes = next(item for item in recognised if item.kind is Kind.CNAES)
    with cnaes.source.open() as stream:
        labels = {row.fields[0]: row.fields[1] for row in read_rows(stream, "c", Kind.CNAES)}  # type: ignore[union-attr]
    assert labels["6204000"] == "Consultoria em tecnologia da informação"


def test_read_rows_dirt_reported_and_rest_kept() -> None:
    raw = (
        b'"33683111";"S";"20140101";"00000000";"N";"00000000";"00000000"\n'
        b"\n"
        b'"12345678";"N";"2014\x000101";"";"N";"";""\n'
        b'"1234";"N";"";"";"N";"";""\n'
        b'"87654321";"N";"";"";"N";""\n'
        b"   \n"
    )
    rows = list(read_rows(io.BytesIO(raw), "Simples", Kind.SIMPLES))
    assert [r.fields[0] for r in rows if isinstance(r, Row)] == ["33683111", "12345678"]
    assert rows[1].fields[2] == "20140101"  # type: ignore[union-attr]
    bad = [(r.line, r.reason) for r in rows if isinstance(r, BadRow)]
    assert bad == [(4, "invalid cnpj_basico"), (5, "wrong number of columns")]


def test_a_company_root_in_lower_case_is_a_bad_row_not_a_company_never_joined() -> None:
    """Establishments are staged in upper case: `12abc345` would never meet its own."""
    raw = (
        b'"12abc345";"X LTDA";"2062";"49";"1000,00";"01";""\n'
        b'"12ABC345";"Y";"2062";"49";"1,00";"01";""\n'
    )
    rows = list(read_rows(io.BytesIO(raw), "Empresas", Kind.EMPRESAS))
    assert [r.fields[0] for r in rows if isinstance(r, Row)] == ["12ABC345"]
    assert [(r.line, r.reason) for r in rows if isinstance(r, BadRow)] == [
        (1, "invalid cnpj_basico")
    ]


latin1_text = st.text(
    alphabet=st.characters(min_codepoint=1, max_codepoint=0xFF, exclude_characters="\r\n"),
    max_size=30,
)
receita_text = st.text(
    alphabet=st.characters(min_codepoint=1, max_codepoint=0x7F, exclude_characters="\r\n")
    | st.characters(min_codepoint=0xC0, max_codepoint=0xFF),
    max_size=30,
)
"""What Receita's names and addresses hold: ASCII and the accented letters. Latin-1's other
bytes (C1 controls and symbols such as `º`) right after an accented capital could spell UTF-8
(`Ã©` is `é`, `Âª` is `ª`); after anything else they read as latin-1 (the next test)."""


def _no_utf8_pair(text: str) -> bool:
    """Whether no character of 0xC2-0xF4 is followed by one of 0x80-0xBF (a pair that spells
    UTF-8 in latin-1 bytes)."""
    return not any(
        0xC2 <= ord(first) <= 0xF4 and 0x80 <= ord(second) <= 0xBF
        for first, second in pairwise(text)
    )


def _encoded(rows: list[list[str]], encoding: str) -> bytes:
    """Company rows of the generated text (names are read as written), with a root and the
    codes and amount Receita writes (any other value is set aside: `test_values.py`)."""
    for row in rows:
        row[0] = "".join(c for c in row[0] if c in string.digits)[:8].rjust(8, "0")
        row[2:6] = ["2062", "49", "1000,00", "01"]
    buffer = io.StringIO()
    csv.writer(buffer, delimiter=";", quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
    return buffer.getvalue().encode(encoding)


def _read(data: bytes) -> list[list[str]]:
    parsed = list(read_rows(io.BytesIO(data), "f", Kind.EMPRESAS))
    return [row.fields for row in parsed if isinstance(row, Row)]


@given(st.lists(st.lists(receita_text, min_size=7, max_size=7), min_size=1, max_size=20))
def test_read_rows_receita_format_round_trip(rows: list[list[str]]) -> None:
    assert _read(_encoded(rows, "latin-1")) == rows


@given(
    st.lists(
        st.lists(latin1_text.filter(_no_utf8_pair), min_size=7, max_size=7),
        min_size=1,
        max_size=20,
    )
)
def test_read_rows_latin1_symbols_and_controls_read_as_latin1(rows: list[list[str]]) -> None:
    """Any latin-1 text (`Nº`, `1ª`, `25°`, a no-break space, C1 controls) reads as written,
    short of an accented capital right before a symbol (the strategy above)."""
    assert _read(_encoded(rows, "latin-1")) == rows


@given(st.lists(st.lists(latin1_text, min_size=7, max_size=7), min_size=1, max_size=20))
def test_read_rows_a_copy_re_encoded_to_utf8_reads_the_same(rows: list[list[str]]) -> None:
    assert _read(_encoded(rows, "utf-8")) == rows


@given(st.lists(st.lists(latin1_text, min_size=7, max_size=7), min_size=1, max_size=5))
def test_read_rows_a_byte_order_mark_loses_no_row(rows: list[list[str]]) -> None:
    """A copy saved as UTF-8 with a byte-order mark: the first row is read, not a bad row
    whose root starts with the mark."""
    assert _read(b"\xef\xbb\xbf" + _encoded(rows, "utf-8")) == rows


def test_read_rows_each_line_in_its_own_encoding() -> None:
    """A file whose lines mix the two encodings (a copy edited by hand) reads right."""
    rows = [
        ["11111111", "AÇOUGUE SÃO JOSÉ Nº 1", "2062", "49", "0,00", "01", ""],
        ["22222222", "PADARIA 1ª DO PORTÃO", "2062", "49", "0,00", "01", ""],
    ]
    data = _encoded(rows[:1], "latin-1") + _encoded(rows[1:], "utf-8")
    assert _read(data) == rows


def test_regime_rows_read_with_their_header_bad_rows_named(tmp_path: Path) -> None:
    """A tax-regime file: a UTF-8 byte-order mark and CRLF allowed, the header skipped; a year,
    a CNPJ, the SCP's CNPJ and the count are checked, each bad row says why."""
    lines = [
        "\ufeffano,cnpj,cnpj_da_scp,forma_de_tributacao,quantidade_de_escrituracoes",
        "2023,33.683.111/0002-80,0,LUCRO PRESUMIDO,1",
        "23,33.683.111/0002-80,0,LUCRO REAL,1",
        "2023,33.683.111/0002-81,0,LUCRO REAL,1",
        "2023,33.683.111/0002-80,12,LUCRO REAL,1",
        "2023,33.683.111/0002-80,0,,1",
        "2023,33.683.111/0002-80,0,LUCRO REAL,um",
        "9999,33.683.111/0002-80,0,LUCRO REAL,1",
        "2022,12.abc.345/01de-35,00.000.000/0001-91,IMUNE DO IRPJ,",
    ]
    path = tmp_path / "Lucro Presumido 2023.csv"
    path.write_bytes("\r\n".join(lines).encode("utf-8") + b"\r\n")
    (recognised,), ignored = scan(path)
    assert (recognised.kind, ignored) == (Kind.REGIMES, [])
    with recognised.source.open() as stream:
        rows = list(read_rows(stream, path.name, Kind.REGIMES))
    assert [row.reason for row in rows if isinstance(row, BadRow)] == [
        "invalid ano", "invalid CNPJ", "invalid cnpj_da_scp", "invalid forma_de_tributacao",
        "invalid quantidade_de_escrituracoes", "invalid ano",
    ]  # fmt: skip
    good = [stage(Kind.REGIMES, row.fields) for row in rows if isinstance(row, Row)]
    assert good == [
        ["33683111", "2023", "", "LUCRO PRESUMIDO", "1"],
        ["12ABC345", "2022", "00000000000191", "IMUNE DO IRPJ", "0"],
    ]


def test_a_copy_saved_as_utf16_reads_as_receitas_file(tmp_path: Path) -> None:
    """Windows tools save "Unicode text" as UTF-16 with a byte-order mark and CRLF line ends:
    the file is recognised by its rows and reads as the latin-1 file it was made from, accents,
    rows and line numbers alike."""
    text = (RECEITA_SAMPLE / "ESTABELE.csv").read_bytes().decode("latin-1")
    (tmp_path / "ESTABELE.csv").write_bytes(text.replace("\n", "\r\n").encode("utf-16"))
    (tmp_path / "copia-be.csv").write_bytes(b"\xfe\xff" + text.encode("utf-16-be"))
    recognised, ignored = scan(tmp_path)
    assert ignored == []
    read = list(read_rows(io.BytesIO(text.encode("latin-1")), "e", Kind.ESTABELECIMENTOS))
    expected = [row.fields for row in read if isinstance(row, Row)]
    assert any("Ã" in field or "Ç" in field for fields in expected for field in fields)
    bad_lines = [row.line for row in read if isinstance(row, BadRow)]
    assert len(recognised) == 2
    for item in recognised:
        assert item.kind is Kind.ESTABELECIMENTOS, item.source.name
        with item.source.open() as stream:
            rows = list(read_rows(stream, item.source.name, item.kind))
        assert [row.fields for row in rows if isinstance(row, Row)] == expected
        assert [row.line for row in rows if isinstance(row, BadRow)] == bad_lines
