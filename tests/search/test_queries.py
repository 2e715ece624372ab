"""The query builders alone: any input gives a bounded query or a named 400, never a crash."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.errors import BadRequestError
from app.search import filters as f
from app.search.names import MAX_WORDS, TYPO_FUZZINESS, joined_variants, name_query, words

VALUES = st.one_of(
    st.text(max_size=40),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=True),
    st.booleans(),
    st.none(),
)


def _leaves(query: Any) -> list[str]:
    if isinstance(query, dict):
        return [leaf for value in query.values() for leaf in _leaves(value)]
    if isinstance(query, list):
        return [leaf for value in query for leaf in _leaves(value)]
    return [query] if isinstance(query, str) else []


@given(st.text(max_size=300))
def test_name_query_any_text_bounded(text: str) -> None:
    query = name_query(text)
    terms = words(text)
    assert len(terms) <= MAX_WORDS
    if not terms:
        assert query is None
        return
    assert query is not None
    # Only normalised words reach Elasticsearch, and never through a query parser.
    encoded = msgspec.json.encode(query).decode()
    assert "query_string" not in encoded
    assert "regexp" not in encoded
    assert "wildcard" not in encoded
    for leaf in _leaves(query):
        if leaf == TYPO_FUZZINESS:  # the builder's own option, not the user's text
            continue
        assert all(c.isascii() and (c.isalnum() or c in " ._") for c in leaf), leaf


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Padaria Pão de Açúcar LTDA", ["padaria", "pao", "de", "acucar"]),
        ("S/A SECURITIZADORA OTIMYZA", ["securitizadora", "otimyza"]),
        ('"AND" /regex/ ~ * OR', ["and", "regex", "or"]),
        ("IND E COM DE MOVEIS", ["industria", "e", "comercio", "de", "moveis"]),
        ("LTDA", ["ltda"]),
    ],
)
def test_words_normalised(text: str, expected: list[str]) -> None:
    assert words(text) == expected


def test_joined_variants_normalised_after_gluing() -> None:
    assert joined_variants("BOM PRECO MERCADO") == ["bompreco mercado", "bom precomercado"]
    assert "servicos" in joined_variants("SERV ICOS")


def _attempt(parse: Callable[[], f.Filtros]) -> f.Filtros | BadRequestError:
    """Parse and check filters the way a route does; the 400 it would answer, if any."""
    try:
        filters = parse()
        f.check_common(filters)
        assert isinstance(f.clauses(filters), list)
    except BadRequestError as error:
        return error
    return filters


@given(st.dictionaries(st.sampled_from(f.FIELDS), VALUES, max_size=8))
def test_filters_from_body_total(data: dict[str, Any]) -> None:
    outcome = _attempt(lambda: f.from_body(msgspec.json.encode(data)))
    if isinstance(outcome, BadRequestError):
        assert outcome.message
    else:
        assert 1 <= outcome.limit <= f.MAX_LIMIT


@given(st.dictionaries(st.sampled_from(f.FIELDS), st.text(max_size=30), max_size=8))
def test_filters_from_query_total(params: dict[str, str]) -> None:
    """Any query string gives the filters it sent and nothing else (text kept as written,
    other values converted), or a 400 naming one of the parameters it sent."""
    outcome = _attempt(lambda: f.from_query(params))
    if isinstance(outcome, BadRequestError):
        assert outcome.message
        assert outcome.details["campo"] in params, (outcome.message, outcome.details)
        return
    assert 1 <= outcome.limit <= f.MAX_LIMIT
    defaults = f.Filtros()
    for name in f.FIELDS:
        value = getattr(outcome, name)
        if name not in params:
            assert value == getattr(defaults, name), name
        elif isinstance(value, str):
            assert value == params[name], name
        else:
            assert value is not None, name


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"uf": "XX"}, "uf"),
        ({"cnae": "4"}, "cnae"),
        ({"cnae": "47a"}, "cnae"),
        ({"telefone": "123"}, "telefone"),
        ({"email": "nao-e-email"}, "email"),
        ({"cep": "abc"}, "cep"),
        ({"ddd": "1"}, "ddd"),
        ({"capital_min": 10, "capital_max": 1}, "capital_min"),
        ({"capital_min": -1}, "capital_min"),
        ({"abertura_de": "2020-02-01", "abertura_ate": "2020-01-01"}, "abertura_de"),
        ({"porte": "gigante"}, "porte"),
        ({"natureza": "20"}, "natureza"),
        ({"situacao": "sumida"}, "situacao"),
        ({"limit": 0}, "limit"),
        ({"limit": 101}, "limit"),
        ({"facets": "cor"}, "facets"),
        ({"municipio": "!!!"}, "municipio"),
    ],
)
def test_bad_filter_named(data: dict[str, Any], field: str) -> None:
    outcome = _attempt(lambda: f.from_body(msgspec.json.encode(data)))
    assert isinstance(outcome, BadRequestError)
    assert outcome.details["campo"] == field


@pytest.mark.parametrize(
    ("data", "field", "said"),
    [
        ({"uf": "SP,"}, "uf", "item vazio"),
        ({"uf": "SP,,RJ"}, "uf", "item vazio"),
        ({"uf": ",SP"}, "uf", "item vazio"),
        ({"situacao": "ativa, "}, "situacao", "item vazio"),
        ({"facets": "uf,"}, "facets", "item vazio"),
        ({"uf": "SP,\u2009RJ"}, "uf", "espaços comuns"),
        ({"porte": "me\u00a0"}, "porte", "espaços comuns"),
        ({"regime_tributario": "real,\u2003presumido"}, "regime_tributario", "espaços comuns"),
    ],
)
def test_a_list_with_an_empty_item_or_odd_spacing_is_refused(
    data: dict[str, Any], field: str, said: str
) -> None:
    """`SP,` lost a value on the way: the list is refused, not read as the values left."""
    outcome = _attempt(lambda: f.from_body(msgspec.json.encode(data)))
    assert isinstance(outcome, BadRequestError)
    assert (outcome.details["campo"], said in outcome.message) == (field, True)


def test_a_list_spaced_with_plain_spaces_reads_as_its_values() -> None:
    filters = f.Filtros(uf=" sp , RJ ", situacao="ativa, baixada", facets=" uf ,cnae")
    assert f.applied(filters).understood["uf"] == ["RJ", "SP"]
    assert f.applied(filters).understood["situacao"] == ["02", "08"]
    assert f.facet_names(filters) == ["cnae", "uf"]


def test_filters_to_clauses() -> None:
    filters = f.from_query(
        {"uf": "sp,rj", "cnae": "47.11-3", "cep": "01001", "situacao": "ativa", "mei": "false"}
    )
    assert f.clauses(filters) == [
        {"terms": {"endereco.uf": ["RJ", "SP"]}},
        {"term": {"cnae_principal.grupo.classe": "47113"}},
        {"prefix": {"endereco.cep": "01001"}},
        {"terms": {"situacao_cadastral.codigo": ["02"]}},
        {"bool": {"must_not": {"term": {"mei.optante": True}}}},
    ]


STRING_FIELDS = [
    name
    for name, spec in msgspec.json.schema(f.Filtros)["$defs"]["Filtros"]["properties"].items()
    if any(option.get("type") == "string" and "format" not in option
           for option in spec.get("anyOf", [spec]))
]  # fmt: skip


@pytest.mark.parametrize("field", STRING_FIELDS)
def test_every_text_filter_bounded_in_its_type(field: str) -> None:
    """Each text filter declares a maximum length, checked while decoding (before any
    normalisation), from the query string and from a body alike."""
    spec = msgspec.json.schema(f.Filtros)["$defs"]["Filtros"]["properties"][field]
    bound = next(o["maxLength"] for o in spec.get("anyOf", [spec]) if o.get("type") == "string")
    assert bound <= 4096
    too_long = "\ufdfa" * (bound + 1)
    for decode in (lambda: f.from_query({field: too_long}),
                   lambda: f.from_body(msgspec.json.encode({field: too_long}))):  # fmt: skip
        with pytest.raises(BadRequestError) as refused:
            decode()
        assert refused.value.details["campo"] == field
