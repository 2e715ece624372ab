"""The autocomplete query builders: total on any text, bounded, never a query parser."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.catalog.service import MAX_QUERY, city_query, cnae_query
from app.errors import BadRequestError


@given(st.text(max_size=150), st.one_of(st.none(), st.text(max_size=4)))
def test_builders_any_text_query_or_400(text: str, uf: str | None) -> None:
    for build in (lambda: cnae_query(text), lambda: city_query(text, uf)):
        try:
            query = build()
        except BadRequestError as error:
            named = error.details["campo"]
            query = {"bool": {}}
        else:
            named = None
        assert named in (None, "query", "uf")
        encoded = json.dumps(query)
        assert "query_string" not in encoded
        assert "regexp" not in encoded
        assert "wildcard" not in encoded
        must = query["bool"].get("must", [])
        assert len(must) <= 8  # at most 8 words, each one bounded clause


def test_cnae_code_prefix_is_a_keyword_prefix() -> None:
    clauses = cnae_query("4711-3/0")["bool"]["filter"]
    assert clauses == [{"term": {"tipo": "cnae"}}, {"prefix": {"codigo": "471130"}}]


@pytest.mark.parametrize("text", ["", "  ", "x" * (MAX_QUERY + 1), "12345678", "%%%"])
def test_cnae_query_rejects(text: str) -> None:
    with pytest.raises(BadRequestError):
        cnae_query(text)


def test_city_codes_are_exact_terms() -> None:
    assert {"term": {"codigo_ibge": "3550308"}} in city_query("3550308", None)["bool"]["filter"]
    assert {"term": {"codigo": "7107"}} in city_query(" 7107 ", "sp")["bool"]["filter"]
