"""Inscrição estadual rules of the 27 UFs, through `app.domain.state_registration`, judged by
numbers published by others, never by numbers our validator made.

Sources (read as data, 2025 snapshots):
- STELLA: the test data of Caelum Stella, an independent Java implementation, at
  github.com/caelum/caelum-stella (commit 54ce3f9),
  `stella-core/src/test/java/br/com/caelum/stella/validation/ie/IE<State>ValidatorTest.java`
  (`validValues`, `valid*String` and `wrongCheckDigit*String`).
- The states' roteiros on SINTEGRA and the SEFAZ pages, each cited with its URL.
No real registrations ship with the shared data (neither `receita-sample` nor
`minha-receita-testdata` has a state-registration file).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.domain import state_registration
from app.domain.codes import UFS
from app.domain.state_registration import Problem, check, formatted

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from registrations import SHAPES

PUBLISHED: list[tuple[str, str]] = [
    # STELLA/IEAcreValidatorTest.java
    ("AC", "01.004.823/001-12"),
    ("AC", "01.004.141/001-46"),
    ("AC", "01.956.867/001-07"),
    # STELLA/IEAlagoasValidatorTest.java
    ("AL", "24.000.004-8"),
    ("AL", "24.076.739-0"),
    ("AL", "24.103.644-5"),
    # STELLA/IEAmapaValidatorTest.java
    ("AP", "03.012.345-9"),
    ("AP", "03.002.547-3"),
    # STELLA/IEAmazonasValidatorTest.java
    ("AM", "04.193.980-8"),
    ("AM", "04.345.678-2"),
    ("AM", "06.200.021-7"),
    ("AM", "07.000.507-9"),
    # https://www.sefaz.ba.gov.br/contribuinte/informacoes_fiscais/doc_fiscal/calculodv.htm
    # (9 digits, modulo 10 and modulo 11 examples)
    ("BA", "1234567-48"),
    ("BA", "1623456-51"),
    # SINTEGRA's Bahia roteiro, http://apl03.sefaz.al.gov.br/sintegra/sintegra/cad_BA.asp
    # (8 digits, modulo 10 and modulo 11 examples)
    ("BA", "123456-63"),
    ("BA", "612345-57"),
    # STELLA/IEBahiaValidatorTest.java
    ("BA", "1000003-06"),
    ("BA", "0635718-30"),
    # STELLA/IECearaValidatorTest.java
    ("CE", "06.000.001-5"),
    ("CE", "06.998.161-2"),
    ("CE", "06.864.509-0"),
    # STELLA/IEDistritoFederalValidatorTest.java
    ("DF", "07.408.738/002-50"),
    ("DF", "07.300.001/001-09"),
    ("DF", "07.343.623/001-77"),
    # STELLA/IEEspiritoSantoValidatorTest.java
    ("ES", "082.223.54-8"),
    ("ES", "082.260.66-4"),
    ("ES", "081.877.45-5"),
    # http://www.sintegra.gov.br/Cad_Estados/cad_GO.html (the worked example)
    ("GO", "10.987.654-7"),
    # STELLA/IEGoiasValidatorTest.java
    ("GO", "10.103.119-1"),
    ("GO", "20.003.152-0"),
    # STELLA/IEMaranhaoValidatorTest.java
    ("MA", "12.000.038-5"),
    ("MA", "12.074072-9"),
    # STELLA/IEMatoGrossoDoSulValidatorTest.java
    ("MS", "28.303.759-8"),
    ("MS", "28.322.235-2"),
    ("MS", "28.301.273-0"),
    # STELLA/IEMatoGrossoValidatorTest.java (11, 9 and 8 digits)
    ("MT", "0013198872-7"),
    ("MT", "0013193686-7"),
    ("MT", "130181544-3"),
    ("MT", "13335740-6"),
    ("MT", "64573571-0"),
    # STELLA/IEMinasGeraisValidatorTest.java; the first is also SINTEGRA's worked example
    # (Minas Gerais roteiro as mirrored at http://cadcobol.com.br/inscricao_estadual_mg.htm)
    ("MG", "062.307.904/0081"),
    ("MG", "702.985.547/0002"),
    ("MG", "063543834.68-78"),
    # STELLA/IEParaValidatorTest.java
    ("PA", "15.999.999-5"),
    ("PA", "15.229.851-7"),
    ("PA", "15.133.081-6"),
    # STELLA/IEParaibaValidatorTest.java
    ("PB", "16.000.001-7"),
    ("PB", "16.030.321-4"),
    ("PB", "16.136.565-5"),
    # STELLA/IEParanaValidatorTest.java
    ("PR", "123.45678-50"),
    ("PR", "099.00004-09"),
    ("PR", "826.01749-09"),
    # http://www.sintegra.gov.br/Cad_Estados/cad_PE.html (eFisco, the worked example)
    ("PE", "0321418-40"),
    # STELLA/IEPernambucoAntigaValidatorTest.java (the former 14-digit numbers)
    ("PE", "18.1.001.0000004-9"),
    ("PE", "18119003256336"),
    # STELLA/IEPiauiValidatorTest.java
    ("PI", "19.301.656-7"),
    # STELLA/IERioDeJaneiroValidatorTest.java
    ("RJ", "78.045.302"),
    ("RJ", "53.518.028"),
    ("RJ", "71.294.242"),
    # STELLA/IERioGrandeDoNorteValidatorTest.java (9 and 10 digits)
    ("RN", "20.040.040-1"),
    ("RN", "20.0.040.040-0"),
    ("RN", "20.3.615.641-0"),
    # STELLA/IERioGrandeDoSulValidatorTest.java
    ("RS", "224/3658792"),
    ("RS", "050/0068836"),
    ("RS", "468/0001479"),
    # http://www.sintegra.gov.br/Cad_Estados/cad_RO.html (the same company before and after
    # the 2000 change of format)
    ("RO", "101.62521-3"),
    ("RO", "0000000062521-3"),
    # STELLA/IERondoniaValidatorTest.java
    ("RO", "0000000172159-3"),
    ("RO", "0000000058712-5"),
    # STELLA/IERoraimaValidatorTest.java
    ("RR", "24006628-1"),
    ("RR", "24001755-6"),
    ("RR", "24004145-5"),
    # STELLA/IESantaCatarinaValidatorTest.java
    ("SC", "251.040.852"),
    ("SC", "214562549"),
    ("SC", "241603331"),
    # STELLA/IESaoPauloComercioIndustriaValidatorTest.java and
    # STELLA/IESaoPauloProdutorRuralValidatorTest.java
    ("SP", "110.042.490.114"),
    ("SP", "P-01100424.3/002"),
    # STELLA/IESergipeValidatorTest.java
    ("SE", "27123456-3"),
    # STELLA/IETocantinsValidatorTest.java
    ("TO", "29.040.636-6"),
    ("TO", "29.040.634-0"),
    ("TO", "29.385.524-2"),
]

PUBLISHED_WRONG: list[tuple[str, str]] = [
    # Each source's own number with a wrong check digit (`wrongCheckDigit*String` of STELLA).
    ("AC", "0100482300115"),
    ("AL", "240000040"),
    ("AP", "030123450"),
    ("AM", "041939800"),
    ("BA", "61234559"),
    ("CE", "060000010"),
    ("DF", "0740873800240"),
    ("ES", "082223540"),
    ("GO", "109876542"),
    ("MA", "120000386"),
    ("MS", "283037591"),
    ("MT", "00132466444"),
    ("MG", "0623079040045"),
    ("MG", "0623079040085"),
    ("PA", "159999999"),
    ("PB", "160000018"),
    ("PR", "1234567860"),
    ("PR", "1234567859"),
    ("PE", "032141849"),
    ("PE", "18100100000048"),
    ("PI", "193016560"),
    ("RJ", "78045304"),
    ("RN", "2000400403"),
    ("RS", "2243658791"),
    ("RO", "00000001721489"),
    ("RR", "240041458"),
    ("SC", "251040858"),
    ("SP", "110042490104"),
    ("SP", "110042490115"),
    ("SP", "P011004245002"),
    ("SE", "271234564"),
    ("TO", "290406360"),
]


def _plain(number: str) -> str:
    return re.sub(r"[^0-9P]", "", number)


def _unpunctuated(text: str) -> str:
    return re.sub(r"[\s./\-]", "", text).upper()


def _check_position(plain: str) -> int:
    """Index of a check digit: the last character, except in São Paulo's rural numbers
    (`P-01100424.3/002`), whose check digit is the tenth and whose last three are not checked."""
    return 9 if plain.startswith("P") else len(plain) - 1


def test_registration_generator_shapes_cover_every_uf() -> None:
    assert sorted(SHAPES) == sorted(UFS)


def test_published_examples_cover_every_uf() -> None:
    assert sorted({uf for uf, _ in PUBLISHED}) == sorted(UFS)
    assert sorted({uf for uf, _ in PUBLISHED_WRONG}) == sorted(UFS)


@pytest.mark.parametrize(("uf", "number"), PUBLISHED)
def test_check_published_number_valid(uf: str, number: str) -> None:
    assert check(uf, number) is None
    assert check(uf.lower(), number) is None
    assert check(f" {uf} ", _plain(number)) is None


@pytest.mark.parametrize(("uf", "number"), PUBLISHED)
def test_check_published_number_other_check_digit_rejected(uf: str, number: str) -> None:
    plain = _plain(number)
    position = _check_position(plain)
    for digit in "0123456789".replace(plain[position], ""):
        mutated = plain[:position] + digit + plain[position + 1 :]
        assert check(uf, mutated) is Problem.CHECK_DIGIT, mutated


@pytest.mark.parametrize(("uf", "number"), PUBLISHED_WRONG)
def test_check_published_wrong_number_rejected(uf: str, number: str) -> None:
    assert check(uf, number) is Problem.CHECK_DIGIT


@pytest.mark.parametrize(("uf", "number"), PUBLISHED)
def test_formatted_published_number_same_characters_still_valid(uf: str, number: str) -> None:
    plain = _plain(number)
    shown = formatted(uf, plain)
    assert _plain(shown).lstrip("0") == plain.lstrip("0")
    assert check(uf, shown) is None


@pytest.mark.parametrize(
    ("uf", "number"),
    [
        # http://www.sintegra.gov.br/Cad_Estados/cad_GO.html: "AB pode ser igual a 10 ou 11 ou
        # 20 a 29". Check digit by the page's rule, weights 9..2 over the first eight digits:
        # 2·9 + 1·8 = 26, 26 mod 11 = 4, 11 − 4 = 7; 2·9 + 9·8 = 90, 90 mod 11 = 2, 11 − 2 = 9.
        ("GO", "21.000.000-7"),
        ("GO", "29.000.000-9"),
    ],
)
def test_check_goias_prefix_21_to_29_valid(uf: str, number: str) -> None:
    assert check(uf, number) is None


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
def test_check_malformed_or_wrong_number_named_problem(
    uf: str, number: str, problem: Problem
) -> None:
    assert check(uf, number) is problem
    assert problem in state_registration.MESSAGES


@given(st.sampled_from(UFS), st.text(max_size=40))
def test_formatted_any_text_keeps_its_characters(uf: str, number: str) -> None:
    """A mask adds punctuation and may pad with zeros; it never drops or changes a character."""
    shown = formatted(uf, number)
    assert _unpunctuated(shown).lstrip("0") == _unpunctuated(number).lstrip("0")


@given(st.sampled_from(UFS), st.from_regex(r"[0-9]{1,14}", fullmatch=True))
def test_check_up_to_fourteen_digits_only_check_digit_problem(uf: str, number: str) -> None:
    assert check(uf, number) in {None, Problem.CHECK_DIGIT}


@given(st.sampled_from(UFS), st.from_regex(r"P?[0-9]{15,20}", fullmatch=True))
def test_check_longer_than_fourteen_digits_characters_problem(uf: str, number: str) -> None:
    assert check(uf, number) is Problem.CHARACTERS


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
def test_situacao_any_spelling_label(raw: str, label: str | None) -> None:
    assert state_registration.situacao(raw) == label
