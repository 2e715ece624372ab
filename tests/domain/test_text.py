from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.domain.text import MAX_NAME, fold, normalize, normalize_name, phonetic, phonetic_name

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


# What an accent-insensitive search of company and partner names should read for each
# Latin-1 letter (À..ÿ, every accented letter of Receita's single-byte files): the base letter,
# or for the letters that are not an accented base letter the ASCII spelling people type for
# them: the transliterations of Lucene's ASCII folding filter, the `asciifolding` of
# Elasticsearch (Æ -> ae, Ø -> o, Þ -> th, Œ -> oe, Ł -> l, ŀ -> l...; read in Lucene 4.7's
# copy vendored by github.com/illucIT/lucene-utils,
# `src/main/java/org/apache/lucene/analysis/miscellaneous/ASCIIFoldingFilter.java`).
# Ordinal indicators read as the letter they are.
LATIN1_LETTERS = {
    "À": "a", "Á": "a", "Â": "a", "Ã": "a", "Ä": "a", "Å": "a", "Æ": "ae", "Ç": "c",
    "È": "e", "É": "e", "Ê": "e", "Ë": "e", "Ì": "i", "Í": "i", "Î": "i", "Ï": "i",
    "Ð": "d", "Ñ": "n", "Ò": "o", "Ó": "o", "Ô": "o", "Õ": "o", "Ö": "o", "Ø": "o",
    "Ù": "u", "Ú": "u", "Û": "u", "Ü": "u", "Ý": "y", "Þ": "th", "ß": "ss",
    "à": "a", "á": "a", "â": "a", "ã": "a", "ä": "a", "å": "a", "æ": "ae", "ç": "c",
    "è": "e", "é": "e", "ê": "e", "ë": "e", "ì": "i", "í": "i", "î": "i", "ï": "i",
    "ð": "d", "ñ": "n", "ò": "o", "ó": "o", "ô": "o", "õ": "o", "ö": "o", "ø": "o",
    "ù": "u", "ú": "u", "û": "u", "ü": "u", "ý": "y", "þ": "th", "ÿ": "y",
    # As in Receita's "PARQUE BELA VISTA 2ª ETAPA" (`receita-sample/ESTABELE.csv`).
    "ª": "a", "º": "o",
}  # fmt: skip

# Letters beyond Latin-1: ISO-8859-15's (Œ, Š, Ž, Ÿ), letters of names from other Latin
# alphabets, and the tricky ones (a ligature, a digraph, a letter with a stroke or a middle dot).
LATIN_EXTENDED_LETTERS = {
    "Œ": "oe", "œ": "oe", "Š": "s", "š": "s", "Ž": "z", "ž": "z", "Ÿ": "y",
    "Ł": "l", "ł": "l", "Đ": "d", "đ": "d", "Ħ": "h", "ħ": "h", "Ŧ": "t", "ŧ": "t",
    "Ŋ": "n", "ŋ": "n", "ı": "i", "İ": "i", "Ŀ": "l", "ŀ": "l", "ſ": "s", "ẞ": "ss",
    "Ĳ": "ij", "ĳ": "ij", "Ǆ": "dz", "ǅ": "dz", "ǆ": "dz", "ǉ": "lj", "ǌ": "nj",
    "ą": "a", "č": "c", "ď": "d", "ę": "e", "ė": "e", "ğ": "g", "ń": "n", "ň": "n",
    "ő": "o", "ř": "r", "ś": "s", "ș": "s", "ş": "s", "ț": "t", "ť": "t", "ů": "u",
    "ű": "u", "ź": "z", "ż": "z",
}  # fmt: skip

NOT_LETTERS = "×÷·"
"""Latin-1 symbols between letters: a word ends there."""

TRANSLITERATED = "".join(
    char
    for char, ascii_ in {**LATIN1_LETTERS, **LATIN_EXTENDED_LETTERS}.items()
    if ascii_ != strip_accents(char).lower()
)
"""The letters whose ASCII spelling is not their Unicode decomposition without marks."""


def test_latin1_letters_table_covers_every_letter() -> None:
    latin1 = [chr(code) for code in range(0xC0, 0x100)]
    assert sorted(LATIN1_LETTERS) == sorted({*latin1, "ª", "º"} - set(NOT_LETTERS))


@pytest.mark.parametrize(("char", "ascii_"), sorted(LATIN1_LETTERS.items()))
def test_fold_latin1_letter_ascii_spelling(char: str, ascii_: str) -> None:
    assert fold(char) == ascii_
    assert normalize(f"X{char}Y") == f"x{ascii_}y"


@pytest.mark.parametrize(("char", "ascii_"), sorted(LATIN_EXTENDED_LETTERS.items()))
def test_fold_latin_extended_letter_ascii_spelling(char: str, ascii_: str) -> None:
    assert fold(char) == ascii_
    assert normalize(f"X{char}Y") == f"x{ascii_}y"


@pytest.mark.parametrize("char", NOT_LETTERS)
def test_normalize_symbol_between_letters_separates_words(char: str) -> None:
    assert normalize(f"X{char}Y") == "x y"


@pytest.mark.parametrize(
    ("name", "typed"),
    [
        ("BJØRN SØRENSEN CONSULTORIA LTDA", "bjorn sorensen consultoria"),
        ("RESTAURANTE ÆGIR", "restaurante aegir"),
        ("CŒUR DE LION MODAS", "coeur de lion modas"),
        ("ŁÓDŹ IMPORTADORA", "lodz importadora"),
    ],
)
def test_normalize_name_typed_without_special_letters_same(name: str, typed: str) -> None:
    assert normalize_name(name) == normalize_name(typed) == typed


_INITIALS = re.compile(r"(?<!\S)(\S)((?: (?:e|and) \S(?!\S))+)")


def _decomposition_tokens(text: str) -> str:
    """Words of `text` by Unicode's own decomposition: marks dropped, lower-cased; single
    letters or digits joined by `e` or `and` written as one word (the documented rule)."""
    words = " ".join(re.findall(r"[a-z0-9]+", strip_accents(text).lower()))
    return _INITIALS.sub(
        lambda found: found.group(1) + "".join(re.findall(r" (?:e|and) (\S)", found.group(2))),
        words,
    )


@given(
    st.text(alphabet=st.characters(max_codepoint=0x24F, exclude_characters=TRANSLITERATED + "./&"))
)
def test_normalize_latin_text_same_as_decomposition(text: str) -> None:
    assert normalize(text) == _decomposition_tokens(text)


@given(st.text())
def test_fold_any_text_idempotent(text: str) -> None:
    assert fold(fold(text)) == fold(text)


@given(st.text(alphabet=st.characters(max_codepoint=0x7F)))
def test_fold_ascii_text_lower_case(text: str) -> None:
    assert fold(text) == text.lower()


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


# Spellings Brazilian names really vary in, written out by hand: each pair must share its sound
# key, and the pairs of the second table are different names that must not.
SAME_SOUND = [
    ("KAROLINE", "CAROLINE"), ("CAROLLINE", "KAROLINE"), ("HELENA", "ELENA"),
    ("GEOVANA", "JEOVANA"), ("YARA", "IARA"), ("PHELIPE", "FELIPE"), ("WAGNER", "VAGNER"),
    ("SOUZA", "SOUSA"), ("LUIZ", "LUIS"), ("THIAGO", "TIAGO"), ("KIOSQUE", "QUIOSQUE"),
    ("CHRISTIANE", "KRISTIANE"), ("XAVIER", "CHAVIER"), ("CECILIA", "SESILIA"),
    ("MATTOS", "MATOS"), ("KAUE", "CAUE"), ("ISABELLA", "YSABELA"), ("GUILHERME", "GUILERME"),
]  # fmt: skip
OTHER_SOUND = [
    ("CARLOS", "MARCOS"), ("GUSTAVO", "JUSTAVO"), ("GATO", "JATO"), ("CASA", "MASA"),
    ("RIO", "RIA"), ("2010", "2011"),
]  # fmt: skip


@pytest.mark.parametrize(("a", "b"), SAME_SOUND)
def test_phonetic_same_sound_same_key(a: str, b: str) -> None:
    assert phonetic(fold(a)) == phonetic(fold(b))


@pytest.mark.parametrize(("a", "b"), OTHER_SOUND)
def test_phonetic_other_sounds_kept_apart(a: str, b: str) -> None:
    assert phonetic(fold(a)) != phonetic(fold(b))


def test_phonetic_name_leaves_connectors_out() -> None:
    assert phonetic_name("Santos & Filhos Ltda") == phonetic_name("SANTOS E FILHOS") != ""
    assert phonetic_name("CASA DO PÃO") == phonetic_name("kasa pao")


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789 ", max_size=60))
def test_phonetic_name_any_text_lower_ascii(text: str) -> None:
    key = phonetic_name(text)
    assert re.fullmatch(r"[a-z0-9 ]*", key)
    assert len(key.split()) <= len(text.split())


def test_initials_joined_by_a_word_are_one_word() -> None:
    assert normalize_name("P E L PEREIRA") == normalize_name("P & L Pereira") == "pl pereira"
    assert normalize_name("LOCADOR W AND A LTDA") == "locador wa"
    assert normalize_name("JOAO E MARIA") == "joao e maria"
