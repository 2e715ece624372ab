from __future__ import annotations

from decimal import Decimal

import pytest

from app.domain.codes import UF_IBGE
from indexer.documents import Builder, capital, iso_date
from indexer.references import (
    MAX_CACHED,
    MAX_MISSING,
    OTHER_CODES,
    References,
    load_fixtures,
    remember,
)
from indexer.sources import Kind


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
        ("999999999999999,99999999999995", Decimal("999999999999999.99999999999995")),
        ("1000000000000000,00", None),
        ("\u0661\u0662\u0663,\u0664\u0665", None),  # other scripts' digits: no amount of Receita's
        ("1_000", None),
        ("1e14", None),
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


def test_builder_keeps_a_bounded_number_of_codes_whatever_the_input() -> None:
    """Millions of distinct made-up codes in the main files: values built past `MAX_CACHED`
    are still right, and not kept; missing codes past `MAX_MISSING` are counted together."""
    refs = load_fixtures(References())
    refs.add(Kind.PAISES, "105", "BRASIL")
    builder = Builder(refs)
    extra = 50
    for n in range(MAX_CACHED + extra):
        code = f"X{n}"
        municipio, _ = builder.municipio(code)
        assert municipio.codigo == code
    assert builder.municipio("X0")[0].codigo == "X0"  # kept: the same object each time
    assert builder.municipio("X0")[0] is builder.municipio("X0")[0]
    last = f"X{MAX_CACHED + extra - 1}"
    assert builder.municipio(last)[0] is not builder.municipio(last)[0]  # built each time
    for n in range(MAX_MISSING + extra):
        assert refs.rotulo(Kind.PAISES, f"9{n}").descricao is None
    assert refs.rotulo(Kind.PAISES, "105").descricao == "BRASIL"
    assert len(refs.missing) <= MAX_MISSING + len(Kind)  # and one "(outros)" per table
    countries = {code: n for (table, code), n in refs.missing.items() if table == "paises"}
    assert sum(countries.values()) == MAX_MISSING + extra
    assert countries[OTHER_CODES] >= extra


def test_remember_keeps_values_up_to_its_bound() -> None:
    cache: dict[int, int] = {}
    assert [remember(cache, n, n * 2) for n in range(MAX_CACHED + 3)][-1] == (MAX_CACHED + 2) * 2
    assert len(cache) == MAX_CACHED


def test_every_shipped_municipality_is_in_the_state_its_ibge_code_names() -> None:
    """The first two digits of an IBGE code are its state's: the table the indexer ships
    (`scripts/build_ibge_table.py`) says each city's state as the code does."""
    states = {code: uf for uf, code in UF_IBGE.items()}
    cities = load_fixtures(References()).ibge.values()
    assert len(cities) > 5500
    wrong = [(c.nome, c.uf) for c in cities if states.get(c.codigo_ibge[:2]) != c.uf]
    assert wrong == []
