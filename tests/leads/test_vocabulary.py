"""The lead vocabulary (`fixtures/reference/segmentos-leads.json`) and the reading of objectives
(`app.leads.objective.read`): pure, no service and no fixture.

    .venv/bin/python -m pytest tests/leads/test_vocabulary.py -q -p no:cacheprovider --noconftest
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections import defaultdict
from pathlib import Path
from types import ModuleType

import pytest

from app.leads.objective import read
from app.leads.vocabulary import FILE, key, vocabulary

ROOT = Path(__file__).resolve().parent.parent.parent
CNAE_TABLE = ROOT / "fixtures" / "sample" / "CNAECSV.csv"
CATEGORIES = ROOT / "fixtures" / "reference" / "categorias-cnae.json"
LABELLED = Path(__file__).resolve().parent / "objetivos-rotulados.json"

# Measured with scripts/leads_eval.py on objetivos-rotulados.json: hit rate 99.3% (134 of 135;
# the miss is the typo "restaurntes"), partial hit rate 100%, code recall 99.4%.
HIT_RATE_FLOOR = 0.98


def _cnae_codes() -> list[str]:
    lines = CNAE_TABLE.read_text(encoding="latin-1").splitlines()
    return [line.split(";")[0].strip('"') for line in lines if line.strip()]


def _raw() -> dict:
    return json.loads(FILE.read_text(encoding="utf-8"))


def _leads_eval() -> ModuleType:
    spec = importlib.util.spec_from_file_location("leads_eval", ROOT / "scripts" / "leads_eval.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # its dataclasses look their module up
    spec.loader.exec_module(sys.modules[spec.name])
    return sys.modules[spec.name]


def test_vocabulary_loads() -> None:
    vocab = vocabulary()
    assert 90 <= len(vocab.segmentos) <= 140
    assert 60 <= len(vocab.objetivos) <= 100
    assert _raw()["about"].strip()
    for objective in vocab.objetivos:
        assert set(objective.segmentos) <= set(vocab.segmentos)


def test_codes_are_real_cnae_codes_or_prefixes() -> None:
    table = _cnae_codes()
    assert "5611201" in table
    subclasses = set(table)
    for slug, segment in vocabulary().segmentos.items():
        for code in segment.cnaes:
            if len(code) == 7:
                assert code in subclasses, (slug, code)
            else:
                assert any(real.startswith(code) for real in table), (slug, code)


def test_city_categories_are_segments_with_their_codes() -> None:
    categories = json.loads(CATEGORIES.read_text(encoding="utf-8"))["categorias"]
    segments = vocabulary().segmentos
    assert len(categories) == 30
    for slug, category in categories.items():
        assert slug in segments, slug
        assert set(category["cnaes"]) <= set(segments[slug].cnaes), slug


def test_no_term_names_two_segments() -> None:
    owners: dict[tuple[str, ...], set[str]] = defaultdict(set)
    for slug, segment in _raw()["segmentos"].items():
        for term in [slug.replace("-", " "), *segment["termos"]]:
            owners[key(term)].add(slug)
    clashes = {" ".join(k): sorted(v) for k, v in owners.items() if len(v) > 1}
    assert not clashes


def test_no_term_names_two_objectives() -> None:
    owners: dict[tuple[str, ...], set[int]] = defaultdict(set)
    for index, objective in enumerate(_raw()["objetivos"]):
        for term in objective["termos"]:
            owners[key(term)].add(index)
    assert not {" ".join(k) for k, v in owners.items() if len(v) > 1}


def test_the_target_is_what_follows_the_last_para() -> None:
    leitura = read("Vendo software de contabilidade para pequenos restaurantes no Paraná")
    assert leitura.segmentos == ["restaurantes"]
    assert leitura.regra == "publico"
    assert leitura.ufs == ["PR"]
    assert leitura.portes == ["01", "03"]
    # "para academia" belongs to what is sold; the last "para" names who buys.
    assert read("Equipamentos para academia pra clínicas de fisioterapia").segmentos == [
        "fisioterapia"
    ]
    assert read("Sistema para escritórios contábeis").segmentos == ["contabilidade"]


@pytest.mark.parametrize(
    ("objetivo", "segmentos"),
    [
        ("Vendo farinha de trigo e insumos de panificação", {"padarias"}),
        ("Vendo equipamentos odontológicos", {"dentistas"}),
        ("Vendo ração", {"pet-shops", "veterinarias", "pecuaria", "avicultura"}),
        ("Ofereço cardápio digital", {"restaurantes", "lanchonetes", "bares"}),
        ("Vendemos software de contabilidade", {"contabilidade"}),
    ],
)
def test_what_is_sold_gives_who_buys_it(objetivo: str, segmentos: set[str]) -> None:
    leitura = read(objetivo)
    assert leitura.regra == "objetivo"
    assert segmentos <= set(leitura.segmentos)


def test_a_segment_named_anywhere_and_none() -> None:
    leitura = read("Atendo academias e pet shops")
    assert (leitura.regra, leitura.segmentos) == ("mencao", ["academias", "pet-shops"])
    leitura = read("Quero algo bem diferente")
    assert (leitura.regra, leitura.segmentos) == (None, [])


def test_states_by_name_after_a_locative_and_by_capital_abbreviation() -> None:
    assert read("Vendo para hotéis no Rio Grande do Sul").ufs == ["RS"]
    assert read("Vendo para hotéis na Bahia e em Santa Catarina").ufs == ["BA", "SC"]
    assert read("Vendo para academias em SP e RJ").ufs == ["SP", "RJ"]
    assert read("Vendo para bahia").ufs == []  # a name needs a locative before it


def test_para_the_state_is_not_para_the_preposition() -> None:
    leitura = read("Vendo para restaurantes no Pará")
    assert (leitura.ufs, leitura.segmentos, leitura.regra) == (["PA"], ["restaurantes"], "publico")
    leitura = read("Vendo café do Pará para padarias")
    assert (leitura.ufs, leitura.segmentos) == (["PA"], ["padarias"])
    assert read("Vendo para padarias").ufs == []


@pytest.mark.parametrize(
    ("objetivo", "portes"),
    [
        ("Vendo para pequenas padarias", ["01", "03"]),
        ("Vendo para microempresas", ["01"]),
        ("Vendo para médias e grandes indústrias", ["05"]),
        ("Vendo para padarias", []),
        ("Vendo para empresas de médio porte", ["05"]),
        ("Vendo para pequenas e médias empresas", ["01", "03", "05"]),
        ("Vendo para grandes redes de supermercados", ["05"]),
        # place names and other senses of the words: no size
        ("Restaurantes no Rio Grande do Sul", []),
        ("Empresas no Rio Grande do Norte", []),
        ("Restaurantes em Campo Grande", []),
        ("Lojas na Praia Grande", []),
        ("Escolas de ensino médio", []),
    ],
)
def test_porte_words(objetivo: str, portes: list[str]) -> None:
    assert read(objetivo).portes == portes


@pytest.mark.parametrize(
    ("objetivo", "resto"),
    [
        ("Fornecedores em Campo Grande", "fornecedores campo grande"),
        ("Parceiros na Praia Grande", "parceiros praia grande"),
        ("Fornecedores para grandes empresas", "fornecedores"),
    ],
)
def test_words_left_for_the_catalog_keep_place_names_whole(objetivo: str, resto: str) -> None:
    """A size word is left out of the words sent to the catalog only where it speaks of size,
    by the same rule as the portes: "Campo Grande" stays whole."""
    assert read(objetivo).resto == resto


def test_labelled_hit_rate() -> None:
    measured = _leads_eval().evaluate(LABELLED)
    assert measured["objectives"] == 135
    assert measured["hit_rate"] >= HIT_RATE_FLOOR
    assert measured["partial_hit_rate"] >= HIT_RATE_FLOOR
