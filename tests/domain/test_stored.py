"""The stored record expands into the full one, the same whatever shape the index holds."""

from __future__ import annotations

import csv
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.domain.cnae import activity
from app.domain.contact import checks
from app.domain.record import Empresa, Registro
from app.domain.stored import expand
from tests.conftest import RECEITA_SAMPLE

STORED: dict[str, Any] = {
    "cnpj": "33683111000280",
    "cnpj_basico": "33683111",
    "matriz_filial": {"codigo": "2", "descricao": "FILIAL"},
    "razao_social": "SERVICO FEDERAL DE PROCESSAMENTO DE DADOS (SERPRO)",
    "nome_fantasia": "REGIONAL BRASILIA-DF",
    "situacao_cadastral": {"codigo": "02", "descricao": "ATIVA", "data": "2004-05-22",
                           "motivo": {"codigo": "00", "descricao": "SEM MOTIVO"}},
    "abertura": "1967-06-30",
    "natureza_juridica": {"codigo": "2011", "descricao": "Empresa Pública"},
    "porte": {"codigo": "05", "descricao": "DEMAIS"},
    "capital_social": 1061004829.23,
    "qualificacao_responsavel": {"codigo": "16", "descricao": "Presidente"},
    "ente_federativo_responsavel": None,
    "cnae_principal": msgspec.to_builtins(activity("6204000", "Consultoria em TI", True)),
    "cnaes_secundarios": [
        {"codigo": "6201501", "descricao": "Desenvolvimento de programas"},
        {"codigo": "9900800", "descricao": None},
    ],
    "endereco": {"tipo_logradouro": "SGAN", "logradouro": "QUADRA 601", "numero": "S/N",
                 "complemento": None, "bairro": "ASA NORTE", "cep": "70836900",
                 "municipio": {"codigo": "9701", "codigo_ibge": "5300108", "nome": "BRASILIA"},
                 "uf": "DF", "pais": None, "cidade_exterior": None},
    "contato": {
        "telefones": [{"ddd": "61", "numero": "21218400", "tipo": "telefone"},
                      {"ddd": "20", "numero": "21218400", "tipo": "fax"}],
        "emails": ["css.serpro@serpro.gov.br"],
        "origem": "receita_federal",
        "disponibilidade": {"telefone": True, "email": True},
    },
    "simples": None,
    "mei": None,
    "socios": [],
    "situacao_especial": None,
    "hash": "0123456789abcdef0123456789abcdef",
}  # fmt: skip


def _full(stored: dict[str, Any]) -> Empresa:
    return expand(msgspec.convert(stored, Registro))


def test_expand_rebuilds_secondary_activities_and_contact_checks() -> None:
    company = _full(STORED)
    first, second = company.cnaes_secundarios
    assert (first.codigo, first.descricao, first.principal, first.secundario) == (
        "6201501", "Desenvolvimento de programas", False, True,
    )  # fmt: skip
    assert first.grupo.secao is not None
    assert first.grupo.secao.codigo == "J"  # divisão 62: Informação e comunicação
    assert (first.grupo.divisao, first.grupo.grupo, first.grupo.classe) == ("62", "620", "62015")
    assert second.grupo.secao is not None
    assert second.grupo.secao.codigo == "U"
    assert second.descricao is None
    assert [(c.tipo, c.valido, c.motivo) for c in company.contato.validacao] == [
        ("telefone", True, None),
        ("fax", False, "DDD inexistente"),
        ("email", True, None),
    ]
    assert company.hash == STORED["hash"]


def test_expand_of_a_full_record_is_the_same_record() -> None:
    """Indices written before the lean shape hold the derived fields too: same answer."""
    company = _full(STORED)
    older = msgspec.to_builtins(company)
    assert _full(older) == company


# The seções of CNAE 2.0 and the divisões each groups (IBGE/CONCLA, as written in
# `fixtures/reference/cnae-secoes.csv`), spelled out here so the test does not read what the
# code reads. Divisões 00, 04, 34, 40, 44, 48, 54, 57, 67, 76, 83, 89 and 98 belong to none.
SECOES = {
    "A": (1, 3), "B": (5, 9), "C": (10, 33), "D": (35, 35), "E": (36, 39), "F": (41, 43),
    "G": (45, 47), "H": (49, 53), "I": (55, 56), "J": (58, 63), "K": (64, 66), "L": (68, 68),
    "M": (69, 75), "N": (77, 82), "O": (84, 84), "P": (85, 85), "Q": (86, 88), "R": (90, 93),
    "S": (94, 96), "T": (97, 97), "U": (99, 99),
}  # fmt: skip


def _secao(divisao: str) -> str | None:
    found = [letter for letter, (low, high) in SECOES.items() if low <= int(divisao) <= high]
    return found[0] if found else None


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("4711302", ("G", "Comércio; reparação de veículos automotores e motocicletas",
                     "47", "471", "47113")),
        ("6204000", ("J", "Informação e comunicação", "62", "620", "62040")),
        ("0111301", ("A", "Agricultura, pecuária, produção florestal, pesca e aqüicultura",
                     "01", "011", "01113")),
        ("3511501", ("D", "Eletricidade e gás", "35", "351", "35115")),
        ("9900800", ("U", "Organismos internacionais e outras instituições extraterritoriais",
                     "99", "990", "99008")),
    ],
)  # fmt: skip
def test_activity_known_code_full_hierarchy(code: str, expected: tuple[str, ...]) -> None:
    grupo = activity(code, None, True).grupo
    assert grupo.secao is not None
    found = (grupo.secao.codigo, grupo.secao.descricao, grupo.divisao, grupo.grupo, grupo.classe)
    assert found == expected
    assert grupo.subclasse == code


@pytest.mark.parametrize(
    "divisao", ["00", "04", "34", "40", "44", "48", "54", "57", "67", "76", "83", "89", "98"]
)
def test_activity_divisao_outside_every_secao_no_secao(divisao: str) -> None:
    assert activity(f"{divisao}12345", None, False).grupo.secao is None


@given(code=st.text(alphabet="0123456789", min_size=7, max_size=7))
def test_activity_any_code_prefixes_and_secao(code: str) -> None:
    cnae = activity(code, None, False)
    grupo = cnae.grupo
    assert (grupo.divisao, grupo.grupo, grupo.classe, grupo.subclasse) == (
        code[:2], code[:3], code[:5], code,
    )  # fmt: skip
    assert (grupo.secao.codigo if grupo.secao else None) == _secao(code[:2])
    assert (cnae.codigo, cnae.principal, cnae.secundario) == (code, False, True)


def test_activity_every_receita_subclass_in_its_secao() -> None:
    """Each of the 1,359 subclasses of Receita's CNAE table sits in a seção."""
    with (RECEITA_SAMPLE / "CNAECSV.csv").open(encoding="latin-1", newline="") as stream:
        codes = [row[0] for row in csv.reader(stream, delimiter=";")]
    assert len(codes) == 1359
    expected = {code: _secao(code[:2]) for code in codes}
    assert None not in expected.values()
    found = {code: activity(code, None, True).grupo.secao for code in codes}
    assert {code: secao.codigo if secao else None for code, secao in found.items()} == expected


def test_checks_cover_every_phone_and_email_in_order() -> None:
    company = _full(STORED)
    found = checks(company.contato.telefones, company.contato.emails)
    assert [c.valor for c in found] == ["6121218400", "2021218400", "css.serpro@serpro.gov.br"]
