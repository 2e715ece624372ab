from __future__ import annotations

import string

from hypothesis import given
from hypothesis import strategies as st

from app.domain import cnpj

ALNUM = string.digits + string.ascii_uppercase
bodies = st.text(alphabet=ALNUM, min_size=12, max_size=12)
numeric_bodies = st.text(alphabet=string.digits, min_size=12, max_size=12)


def test_check_alphanumeric_example_valid() -> None:
    assert cnpj.check("12ABC34501DE35").valid
    assert cnpj.check("12.ABC.345/01DE-35").valid


def test_check_alphanumeric_wrong_second_digit_invalid() -> None:
    assert cnpj.check("12ABC34501DE34").problem is cnpj.Problem.SECOND_DIGIT


def test_check_numeric_real_cnpj_valid() -> None:
    assert cnpj.check("33.683.111/0002-80").cnpj == "33683111000280"
    assert cnpj.check("33683111000280").valid


def test_check_reports_each_problem() -> None:
    assert cnpj.check("").problem is cnpj.Problem.EMPTY
    assert cnpj.check("123").problem is cnpj.Problem.LENGTH
    assert cnpj.check("12ABC34501DEXX").problem is cnpj.Problem.CHARACTERS
    assert cnpj.check("33683111000290").problem is cnpj.Problem.FIRST_DIGIT
    assert cnpj.check("33683111000281").problem is cnpj.Problem.SECOND_DIGIT


@given(bodies)
def test_check_digits_round_trip_alphanumeric(body: str) -> None:
    value = body + cnpj.check_digits(body)
    assert cnpj.check(value).valid
    assert cnpj.check(cnpj.format_cnpj(value)).cnpj == value
    assert cnpj.check(value.lower()).valid


@given(numeric_bodies)
def test_check_digits_round_trip_numeric(body: str) -> None:
    value = body + cnpj.check_digits(body)
    assert value.isdigit()
    assert cnpj.check(value).valid


@given(bodies, st.integers(min_value=12, max_value=13), st.integers(min_value=1, max_value=9))
def test_check_altered_digit_invalid(body: str, position: int, shift: int) -> None:
    value = body + cnpj.check_digits(body)
    altered = value[:position] + str((int(value[position]) + shift) % 10) + value[position + 1 :]
    assert not cnpj.check(altered).valid


@given(st.text(max_size=40))
def test_check_any_text_never_raises(raw: str) -> None:
    result = cnpj.check(raw)
    assert result.valid == (result.problem is None)
