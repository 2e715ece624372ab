from __future__ import annotations

import pytest

from app.domain.contact import email_problem, phone_problem


@pytest.mark.parametrize(
    ("ddd", "number", "valid"),
    [
        ("61", "33114000", True),
        ("11", "987654321", True),
        ("11", "887654321", False),
        ("20", "33114000", False),
        (None, "33114000", False),
        ("61", "3311400", False),
        ("61", "99999999", False),
        ("61", "3311-400", False),
    ],
)
def test_phone_problem_brazilian_numbers(ddd: str | None, number: str, valid: bool) -> None:
    assert (phone_problem(ddd, number) is None) is valid


@pytest.mark.parametrize(
    ("address", "valid"),
    [
        ("serconta@gbi.com.br", True),
        ("Contato.Vendas+1@Empresa-X.com", True),
        ("sem-arroba.com.br", False),
        ("a@b", False),
        ("a@@b.com", False),
        ("", False),
    ],
)
def test_email_problem_syntax(address: str, valid: bool) -> None:
    assert (email_problem(address) is None) is valid
