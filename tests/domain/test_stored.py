"""The stored record expands into the full one, the same whatever shape the index holds."""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from app.domain.cnae import activity, hierarchy
from app.domain.contact import checks
from app.domain.record import Empresa, Registro
from app.domain.stored import expand

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


@given(code=st.text(alphabet="0123456789", min_size=7, max_size=7))
def test_activity_hierarchy_follows_from_the_code(code: str) -> None:
    cnae = activity(code, None, False)
    assert cnae.grupo == hierarchy(code)
    assert cnae.grupo.subclasse == code
    assert code.startswith(cnae.grupo.classe)
    assert cnae.grupo.classe.startswith(cnae.grupo.grupo)
    assert cnae.grupo.grupo.startswith(cnae.grupo.divisao)
    assert (cnae.principal, cnae.secundario) == (False, True)


def test_checks_cover_every_phone_and_email_in_order() -> None:
    company = _full(STORED)
    found = checks(company.contato.telefones, company.contato.emails)
    assert [c.valor for c in found] == ["6121218400", "2021218400", "css.serpro@serpro.gov.br"]
