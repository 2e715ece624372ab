"""CNPJ check digits judged by what does not share our code: two independent implementations
(python-stdnum's `stdnum.br.cnpj` and validate-docbr's `CNPJ`), Receita's published example and
the real CNPJs of Receita's own files."""

from __future__ import annotations

import csv
import io
import re
import string
import zipfile
from pathlib import Path

import pytest
import validate_docbr
from hypothesis import given
from hypothesis import strategies as st
from stdnum.br import cnpj as stdnum_cnpj

from app.domain import cnpj
from tests.conftest import PEER_DATA, RECEITA_SAMPLE

DOCBR = validate_docbr.CNPJ()
ALNUM = string.digits + string.ascii_uppercase
ALL_ZEROS = "0" * 14


def not_all_zeros(raw: str) -> bool:
    """Generated inputs leave out the all-zero CNPJ: it has a test of its own (see below)."""
    return raw.upper() not in {ALL_ZEROS, "0" * 12}


bodies = st.text(alphabet=ALNUM, min_size=12, max_size=12).filter(not_all_zeros)
"""Any 12-character body of 0-9A-Z."""


def oracle_digits(body: str) -> str:
    return stdnum_cnpj.calc_check_digits(body)


def oracles_accept(raw: str) -> bool:
    """Both oracles' verdict; they must agree with each other on every input we give them."""
    verdict = stdnum_cnpj.is_valid(raw)
    assert DOCBR.validate(raw) is verdict, raw
    return verdict


def expected_problem(raw: str) -> cnpj.Problem | None:
    """The problem the documented checks find, in their documented order (punctuation `. / -`
    and whitespace stripped, ASCII letters upper-cased; a character outside those and ASCII
    letters and digits refused first); the check digits come from stdnum."""
    value = re.sub(r"[\s./\-]", "", raw)
    value = value.upper() if value.isascii() else value
    if not value:
        return cnpj.Problem.EMPTY
    if re.search(r"[^ ./\-0-9A-Za-z]", raw):
        return cnpj.Problem.CHARACTERS
    if len(value) != 14:
        return cnpj.Problem.LENGTH
    if not re.fullmatch(r"[0-9A-Z]{12}[0-9]{2}", value):
        return cnpj.Problem.CHARACTERS
    if value[:12] == "0" * 12:
        return cnpj.Problem.ZEROS
    digits = oracle_digits(value[:12])
    if value[12] != digits[0]:
        return cnpj.Problem.FIRST_DIGIT
    if value[13] != digits[1]:
        return cnpj.Problem.SECOND_DIGIT
    return None


def _establishments() -> list[str]:
    """Full CNPJs of Receita's establishment rows (root, order and check digits)."""
    with (RECEITA_SAMPLE / "ESTABELE.csv").open(encoding="latin-1", newline="") as stream:
        return [row[0] + row[1] + row[2] for row in csv.reader(stream, delimiter=";")]


def _company_partners() -> list[str]:
    """CNPJs of partners that are companies (`identificador_socio` 1) in Receita's file."""
    with (RECEITA_SAMPLE / "SOCIOCSV.csv").open(encoding="latin-1", newline="") as stream:
        return [row[3] for row in csv.reader(stream, delimiter=";") if row[1] == "1"]


def _tax_regime_rows(archive: Path) -> list[str]:
    """Formatted CNPJs (`00.000.000/0001-91`) of a tax-regime file of the peer's test release."""
    with zipfile.ZipFile(archive) as zipped:
        (member,) = zipped.namelist()
        text = zipped.read(member).decode("utf-8")
    return [row["cnpj"] for row in csv.DictReader(io.StringIO(text))]


UPSTREAM_TEST_ROWS = {f"990000{n:02d}000100" for n in range(1, 7)}
"""Six rows of the sample that are not Receita's (`receita-sample/PROVENANCE.md`)."""

REAL_CNPJS = sorted(
    {number for number in _establishments() if number not in UPSTREAM_TEST_ROWS}
    | set(_company_partners())
    | {
        number
        for name in ("Lucro Real", "Lucro Presumido", "Lucro Arbitrado", "Imunes e Isentas")
        for number in _tax_regime_rows(PEER_DATA / f"{name}.zip")
    }
)
"""CNPJs Receita issued, as its files spell them (the tax-regime ones formatted)."""


def test_real_cnpjs_loaded_from_every_source() -> None:
    assert len(REAL_CNPJS) == 2000 + 41 + 4
    assert {"57815224000179", "33.683.111/0002-80", "00.000.000/0001-91"} <= set(REAL_CNPJS)


@pytest.mark.parametrize(
    ("raw", "cleaned", "problem"),
    [
        # /work/shared/docs/receita-format.md, "Identifiers": Receita's alphanumeric example.
        ("12ABC34501DE35", "12ABC34501DE35", None),
        ("12.ABC.345/01DE-35", "12ABC34501DE35", None),
        ("12abc34501de35", "12ABC34501DE35", None),
        ("12ABC34501DE34", "12ABC34501DE34", cnpj.Problem.SECOND_DIGIT),
        # SERPRO, the row of the peer's test release.
        ("33.683.111/0002-80", "33683111000280", None),
        ("33683111000290", "33683111000290", cnpj.Problem.FIRST_DIGIT),
        ("33683111000281", "33683111000281", cnpj.Problem.SECOND_DIGIT),
    ],
)
def test_check_published_examples_exact_outcome(
    raw: str, cleaned: str, problem: cnpj.Problem | None
) -> None:
    assert oracles_accept(raw) is (problem is None)
    assert cnpj.check(raw) == cnpj.Check(cleaned, problem)


@pytest.mark.parametrize(
    ("raw", "cleaned", "problem"),
    [
        ("", "", cnpj.Problem.EMPTY),
        (" ./- ", "", cnpj.Problem.EMPTY),
        ("123", "123", cnpj.Problem.LENGTH),
        ("12ABC34501DE355", "12ABC34501DE355", cnpj.Problem.LENGTH),
        ("12ABC34501DEXX", "12ABC34501DEXX", cnpj.Problem.CHARACTERS),
        ("12ABC34501DE3A", "12ABC34501DE3A", cnpj.Problem.CHARACTERS),
        ("12ABC34501D_35", "12ABC34501D_35", cnpj.Problem.CHARACTERS),
        ("١٢ABC34501DE35", "١٢ABC34501DE35", cnpj.Problem.CHARACTERS),
        # `ſ`.upper() is `S`: only ASCII letters are upper-cased
        ("12abcſ4501de09", "12abcſ4501de09", cnpj.Problem.CHARACTERS),
        # a valid CNPJ padded past 64 characters is not cut back to one
        ("33.683.111/0002-80".ljust(65), "", cnpj.Problem.LENGTH),
    ],
)
def test_check_malformed_input_named_problem(raw: str, cleaned: str, problem: cnpj.Problem) -> None:
    assert cnpj.check(raw) == cnpj.Check(cleaned, problem)


def test_check_real_cnpjs_valid_like_oracles() -> None:
    refused = [number for number in REAL_CNPJS if not oracles_accept(number)]
    assert refused == []
    assert [number for number in REAL_CNPJS if not cnpj.check(number).valid] == []


@pytest.mark.parametrize("number", sorted(UPSTREAM_TEST_ROWS))
def test_check_upstream_test_rows_invalid_like_oracles(number: str) -> None:
    assert not oracles_accept(number)
    assert cnpj.check(number).problem is expected_problem(number)
    assert cnpj.check(number).problem is not None


def test_check_all_zero_cnpj_invalid_like_oracles() -> None:
    """No CNPJ is all zeros: both oracles refuse it (stdnum: a body of twelve zeros is not a
    number; validate-docbr: one character repeated fourteen times)."""
    assert not stdnum_cnpj.is_valid(ALL_ZEROS)
    assert not DOCBR.validate(ALL_ZEROS)
    assert not cnpj.check(ALL_ZEROS).valid


@given(bodies)
def test_check_digits_any_body_same_as_oracles(body: str) -> None:
    digits = cnpj.check_digits(body)
    assert digits == oracle_digits(body)
    assert oracles_accept(body + digits)
    assert cnpj.check_digit(body) == digits[0]
    assert cnpj.check_digit(body + digits[0]) == digits[1]


@given(bodies, st.sampled_from([12, 13]), st.integers(min_value=1, max_value=9))
def test_check_altered_check_digit_named_problem(body: str, position: int, shift: int) -> None:
    value = body + oracle_digits(body)
    altered = value[:position] + str((int(value[position]) + shift) % 10) + value[position + 1 :]
    assert not oracles_accept(altered)
    problem = cnpj.Problem.FIRST_DIGIT if position == 12 else cnpj.Problem.SECOND_DIGIT
    assert cnpj.check(altered) == cnpj.Check(altered, problem)


@st.composite
def fourteen_characters(draw: st.DrawFn) -> str:
    """14 characters of 0-9A-Za-z: a valid CNPJ (by stdnum's digits), possibly with one
    character replaced, and possibly lower-cased."""
    body = draw(bodies)
    value = body + oracle_digits(body)
    if draw(st.booleans()):
        position = draw(st.integers(min_value=0, max_value=13))
        value = value[:position] + draw(st.sampled_from(ALNUM)) + value[position + 1 :]
    return value.lower() if draw(st.booleans()) else value


any_fourteen = fourteen_characters().filter(not_all_zeros) | st.text(
    alphabet=ALNUM + string.ascii_lowercase, min_size=14, max_size=14
).filter(not_all_zeros)


@given(any_fourteen)
def test_check_any_14_characters_same_verdict_as_oracles(raw: str) -> None:
    assert cnpj.check(raw).valid is oracles_accept(raw)
    assert cnpj.check(raw).problem is expected_problem(raw)


@given(fourteen_characters())
def test_check_formatted_same_as_plain(raw: str) -> None:
    shown = stdnum_cnpj.format(raw)
    assert cnpj.check(shown) == cnpj.check(raw.upper())
    if cnpj.check(raw).valid:
        assert cnpj.format_cnpj(raw.upper()) == shown.upper()


@given(st.text(max_size=40))
def test_check_any_text_documented_problem(raw: str) -> None:
    result = cnpj.check(raw)
    assert result.problem is expected_problem(raw)
    if result.valid and not_all_zeros(result.cnpj):
        assert result.cnpj == re.sub(r"[\s./\-]", "", raw).upper()
        assert oracles_accept(result.cnpj)


@pytest.mark.parametrize(
    "raw", ["\u200b33683111000280", "33683111000280\x00", "33683111000280\n", "3368311100028\u00a0"]
)
def test_a_character_no_cnpj_has_is_the_reason_whatever_the_length(raw: str) -> None:
    """A zero-width space, a NUL, a line break or a non-breaking space is what is wrong with
    the input, not its length."""
    assert cnpj.check(raw).problem is cnpj.Problem.CHARACTERS
