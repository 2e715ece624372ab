"""One summary of a company for every list: search results, a partner's companies, companies
related by partner or contact, similar companies. The full record is at `/v1/cnpj/{cnpj}`.

`Fonte` is what a list reads from the index (`SOURCE_FIELDS`), decoded straight from
Elasticsearch's answer; `resumo` turns it into the fields of `Resumo`, which each list's item
Struct extends with what that list adds (a score, the partners in common...).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import msgspec

from app.domain.record import Disponibilidade, Empresa, Socio

SOURCE_FIELDS = [
    "cnpj", "cnpj_basico", "razao_social", "nome_fantasia", "matriz_filial.descricao",
    "situacao_cadastral.descricao", "abertura", "porte.descricao", "capital_social",
    "cnae_principal.codigo", "cnae_principal.descricao", "endereco.municipio.nome",
    "endereco.municipio.codigo_ibge", "endereco.uf", "endereco.cep", "data_referencia",
]  # fmt: skip


class Resumo(msgspec.Struct, kw_only=True):
    """A company (one establishment) in a list."""

    cnpj: str
    razao_social: str | None
    nome_fantasia: str | None
    matriz_filial: str | None
    situacao_cadastral: str | None
    abertura: str | None
    porte: str | None
    capital_social: Decimal | None
    cnae_principal: str | None
    cnae_descricao: str | None
    municipio: str | None
    codigo_ibge: str | None
    uf: str | None
    cep: str | None


class _Label(msgspec.Struct):
    descricao: str | None = None


class _Cnae(msgspec.Struct):
    codigo: str
    descricao: str | None = None


class _Municipio(msgspec.Struct):
    nome: str | None = None
    codigo_ibge: str | None = None
    codigo: str | None = None


class _Telefone(msgspec.Struct):
    ddd: str | None = None
    numero: str = ""
    tipo: str = ""


class _Contato(msgspec.Struct):
    telefones: list[_Telefone] = msgspec.field(default_factory=list)
    emails: list[str] = msgspec.field(default_factory=list)
    origem: str = ""
    disponibilidade: Disponibilidade | None = None


class _Endereco(msgspec.Struct):
    tipo_logradouro: str | None = None
    logradouro: str | None = None
    numero: str | None = None
    municipio: _Municipio | None = None
    uf: str | None = None
    cep: str | None = None


class _Busca(msgspec.Struct):
    socios_chaves: list[str] = msgspec.field(default_factory=list)


class Fonte(msgspec.Struct):
    """The indexed fields a list may read (each list asks only for those it needs)."""

    cnpj: str
    cnpj_basico: str = ""
    razao_social: str | None = None
    nome_fantasia: str | None = None
    matriz_filial: _Label | None = None
    situacao_cadastral: _Label | None = None
    abertura: str | None = None
    porte: _Label | None = None
    capital_social: Decimal | None = None
    cnae_principal: _Cnae | None = None
    endereco: _Endereco | None = None
    contato: _Contato | None = None
    socios: list[Socio] = msgspec.field(default_factory=list)
    busca: _Busca | None = None
    data_referencia: str | None = None


def _label(value: _Label | None) -> str | None:
    return value.descricao if value else None


def resumo(source: Fonte) -> dict[str, Any]:
    """The `Resumo` fields of `source`, for the list item Struct to take as keywords."""
    address = source.endereco or _Endereco()
    municipio = address.municipio or _Municipio()
    cnae = source.cnae_principal
    return {
        "cnpj": source.cnpj,
        "razao_social": source.razao_social,
        "nome_fantasia": source.nome_fantasia,
        "matriz_filial": _label(source.matriz_filial),
        "situacao_cadastral": _label(source.situacao_cadastral),
        "abertura": source.abertura,
        "porte": _label(source.porte),
        "capital_social": source.capital_social,
        "cnae_principal": cnae.codigo if cnae else None,
        "cnae_descricao": cnae.descricao if cnae else None,
        "municipio": municipio.nome,
        "codigo_ibge": municipio.codigo_ibge,
        "uf": address.uf,
        "cep": address.cep,
    }


def summary_of(company: Empresa) -> Resumo:
    """The summary of a full record."""
    address = company.endereco
    municipio = address.municipio
    cnae = company.cnae_principal
    return Resumo(
        cnpj=company.cnpj,
        razao_social=company.razao_social,
        nome_fantasia=company.nome_fantasia,
        matriz_filial=company.matriz_filial.descricao,
        situacao_cadastral=company.situacao_cadastral.descricao,
        abertura=company.abertura,
        porte=company.porte.descricao if company.porte else None,
        capital_social=company.capital_social,
        cnae_principal=cnae.codigo if cnae else None,
        cnae_descricao=cnae.descricao if cnae else None,
        municipio=municipio.nome if municipio else None,
        codigo_ibge=municipio.codigo_ibge if municipio else None,
        uf=address.uf,
        cep=address.cep,
    )
