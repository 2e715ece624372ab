"""Inscrição estadual rules of the 27 UFs, through `app.domain.state_registration`."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.domain import state_registration
from app.domain.codes import UFS
from app.domain.state_registration import Problem, check, formatted

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from registrations import SHAPES, valid_registration

# Published examples: the worked example of each state's rule on SINTEGRA's "Conferência de
# Inscrições Estaduais" pages and the states' own documentation.
PUBLISHED = [
    ("SP", "110.042.490.114"),
    ("SP", "P-01100424.3/002"),
    ("MG", "062.307.904/0081"),
    ("RJ", "99.999.99-3"),
    ("BA", "123456-63"),
    ("PR", "123.45678-50"),
    ("RS", "224/3658792"),
    ("SC", "251.040.852"),
    ("AC", "01.004.823/001-12"),
    ("GO", "10.987.654-7"),
    ("DF", "07300001001-09"),
    ("PE", "0321418-40"),
    ("PE", "18.1.001.0000004-9"),
]


@pytest.mark.parametrize(("uf", "number"), PUBLISHED)
def test_published_examples_valid(uf: str, number: str) -> None:
    assert check(uf, number) is None
    assert check(uf.lower(), number) is None


def test_every_uf_has_a_rule() -> None:
    assert sorted(SHAPES) == sorted(UFS)


@pytest.mark.parametrize("uf", UFS)
def test_wrong_last_digit_rejected(uf: str) -> None:
    rng = random.Random(uf)
    for _ in range(20):
        number = valid_registration(uf, rng)
        assert check(uf, number) is None
        for digit in "0123456789":
            if digit != number[-1]:
                assert check(uf, number[:-1] + digit) is Problem.CHECK_DIGIT, (uf, number)


@given(st.sampled_from(UFS), st.randoms(use_true_random=False))
def test_generated_numbers_valid_and_formatted(uf: str, rng: random.Random) -> None:
    number = valid_registration(uf, rng)
    assert check(uf, number) is None
    shown = formatted(uf, number)
    assert state_registration.clean(shown).lstrip("0") == number.lstrip("0")
    assert check(uf, shown) is None


@pytest.mark.parametrize(
    ("uf", "number", "problem"),
    [
        ("XX", "110042490114", Problem.UF),
        ("", "110042490114", Problem.UF),
        ("EX", "110042490114", Problem.UF),
        ("SP", "", Problem.EMPTY),
        ("SP", " ./- ", Problem.EMPTY),
        ("SP", "ISENTO", Problem.CHARACTERS),
        ("SP", "1100424901145555", Problem.CHARACTERS),
        ("SP", "١١٠٠٤٢٤٩٠١١٤", Problem.CHARACTERS),
        ("MG", "P0623079040081", Problem.CHARACTERS),
        ("SP", "110042490115", Problem.CHECK_DIGIT),
        ("SP", "P", Problem.CHARACTERS),
        ("SP", "P0", Problem.CHECK_DIGIT),
        ("RJ", "9999999", Problem.CHECK_DIGIT),
    ],
)
def test_invalid_numbers_named(uf: str, number: str, problem: Problem) -> None:
    assert check(uf, number) is problem
    assert problem in state_registration.MESSAGES


@given(st.text(max_size=4), st.text(max_size=40))
def test_check_and_format_total(uf: str, number: str) -> None:
    problem = check(uf, number)
    assert problem is None or isinstance(problem, Problem)
    for state in UFS:
        check(state, number)
        assert isinstance(formatted(state, number), str)


@given(st.sampled_from(UFS), st.from_regex(r"P?[0-9]{0,15}", fullmatch=True))
def test_check_total_on_digit_strings(uf: str, number: str) -> None:
    assert check(uf, number) in {None, *Problem}


@pytest.mark.parametrize(
    ("raw", "label"),
    [
        ("habilitado", "HABILITADO"),
        ("Não Habilitado", "NÃO HABILITADO"),
        ("NAO HABILITADO", "NÃO HABILITADO"),
        ("baixado", "BAIXADO"),
        ("ATIVO", None),
    ],
)
def test_situacao_spellings(raw: str, label: str | None) -> None:
    assert state_registration.situacao(raw) == label
