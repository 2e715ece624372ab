from __future__ import annotations

from decimal import Decimal

import pytest

from indexer.documents import capital, iso_date


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("1061004829,23", Decimal("1061004829.23")),
        ("1.234,56", Decimal("1234.56")),
        ("0,00", Decimal("0.00")),
        ("10000", Decimal("10000")),
        ("", None),
        ("abc", None),
        ("NaN", None),
    ],
)
def test_capital_decimal_comma_exact(raw: str, expected: Decimal | None) -> None:
    assert capital(raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("19670630", "1967-06-30"),
        ("00000000", None),
        ("0", None),
        ("", None),
        ("20230231", None),
        ("2023023", None),
    ],
)
def test_iso_date_receita_dates(raw: str, expected: str | None) -> None:
    assert iso_date(raw) == expected
