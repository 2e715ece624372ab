from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.domain.text import MAX_NAME, _fold_unicode, fold, normalize, normalize_name

OUTPUT = re.compile(r"[a-z0-9]+( [a-z0-9]+)*|")


def strip_accents(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(char for char in decomposed if not unicodedata.combining(char))


@given(st.text())
def test_normalize_name_any_text_idempotent(text: str) -> None:
    once = normalize_name(text)
    assert normalize_name(once) == once
    assert OUTPUT.fullmatch(once)


@given(st.text())
def test_normalize_any_text_idempotent(text: str) -> None:
    once = normalize(text)
    assert normalize(once) == once
    assert OUTPUT.fullmatch(once)


@given(st.text())
def test_normalize_name_accents_ignored(text: str) -> None:
    assert normalize_name(strip_accents(text)) == normalize_name(text)


@given(st.text(alphabet=st.characters(max_codepoint=0xFF)))
def test_normalize_name_latin1_case_ignored(text: str) -> None:
    assert normalize_name(text.upper()) == normalize_name(text.lower())


@given(st.text())
def test_fold_any_text_never_raises(text: str) -> None:
    assert isinstance(fold(text), str)


@given(st.text(alphabet=st.characters(max_codepoint=0x36F)) | st.text())
def test_fold_latin_table_same_as_unicode_path(text: str) -> None:
    reference = text.casefold() if text.isascii() else _fold_unicode(text)
    assert fold(text) == reference


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("PADARIA AÇÃO LTDA", "padaria acao"),
        ("Padaria Ação Ltda.", "PADARIA ACAO"),
        ("PETROLEO BRASILEIRO S.A. PETROBRAS", "Petróleo Brasileiro S/A - Petrobras"),
        ("CONSTRUTORA XYZ S/A", "construtora xyz sa"),
        ("CONSTRUTORA XYZ S/A", "construtora xyz"),
        ("MERCADO BOM PRECO EIRELI ME", "Mercado Bom Preço"),
        ("MERCADO BOM PRECO - EPP", "mercado bom preço"),
        ("CIA BRASILEIRA DE DISTRIB", "Companhia Brasileira de Distribuidora"),
        ("IND E COM DE MOVEIS", "industria e comercio de moveis"),
        ("C&A MODAS", "c & a modas"),
        ("C&A MODAS", "CA MODAS"),
        ("ABC PART. LTDA", "abc participacoes"),
    ],
)
def test_normalize_name_equivalent_spellings_equal(a: str, b: str) -> None:
    assert normalize_name(a) == normalize_name(b)


def test_normalize_name_keeps_distinct_names_apart() -> None:
    assert normalize_name("PADARIA SAO JOSE") != normalize_name("PADARIA SAO JOAO")
    assert normalize_name("ME AJUDA SERVICOS") == "me ajuda servicos"


def test_normalize_name_caller_text_bounded_before_cache() -> None:
    """Only the first `MAX_NAME` characters are normalised (and cached), whatever is sent."""
    long = "padaria " * 10_000
    assert normalize_name(long) == normalize_name(long[:MAX_NAME])
    assert len(normalize_name(long)) <= MAX_NAME
