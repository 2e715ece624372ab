"""The company record: one establishment (a full CNPJ) with its company, partners and labels.

`Empresa` is the body of `GET /v1/cnpj/{cnpj}`; `Registro`, the index document's `_source` (with
the normalised `busca` fields in `Documento`), shares its fields but leaves out what follows from
other fields by a fixed rule. Codes are strings exactly as Receita writes them (leading
zeros matter: `"02"`, `"0001"`); every code carries its decoded label when the reference table
has one (`descricao` is null otherwise). Dates are ISO `YYYY-MM-DD` or null.
"""

from __future__ import annotations

from decimal import Decimal

import msgspec


class Rotulo(msgspec.Struct, frozen=True, kw_only=True):
    """A Receita code with its label."""

    codigo: str
    descricao: str | None


class Situacao(msgspec.Struct, frozen=True, kw_only=True):
    codigo: str
    descricao: str | None
    data: str | None
    motivo: Rotulo | None


class SituacaoEspecial(msgspec.Struct, frozen=True, kw_only=True):
    descricao: str
    data: str | None


class Secao(msgspec.Struct, frozen=True, kw_only=True):
    codigo: str
    descricao: str | None


class HierarquiaCnae(msgspec.Struct, frozen=True, kw_only=True):
    """Where a subclass sits: seção (letter) > divisão (2 digits) > grupo (3) > classe (5) >
    subclasse (7)."""

    secao: Secao | None
    divisao: str
    grupo: str
    classe: str
    subclasse: str


class Cnae(msgspec.Struct, frozen=True, kw_only=True):
    codigo: str
    descricao: str | None
    principal: bool
    secundario: bool
    grupo: HierarquiaCnae


class Municipio(msgspec.Struct, frozen=True, kw_only=True):
    codigo: str
    """Receita's own (TOM/SIAFI) code."""
    codigo_ibge: str | None
    nome: str | None


class Endereco(msgspec.Struct, frozen=True, kw_only=True):
    tipo_logradouro: str | None
    logradouro: str | None
    numero: str | None
    complemento: str | None
    bairro: str | None
    cep: str | None
    municipio: Municipio | None
    uf: str | None
    pais: Rotulo | None
    cidade_exterior: str | None


class Telefone(msgspec.Struct, frozen=True, kw_only=True):
    ddd: str | None
    numero: str
    tipo: str
    """`telefone` or `fax`."""


class Validacao(msgspec.Struct, frozen=True, kw_only=True):
    """Syntax check of one phone or e-mail of the record."""

    tipo: str
    """`telefone`, `fax` or `email`."""
    valor: str
    valido: bool
    motivo: str | None


class Disponibilidade(msgspec.Struct, frozen=True, kw_only=True):
    """Whether the record has at least one syntactically valid phone / e-mail."""

    telefone: bool
    email: bool


class Contato(msgspec.Struct, frozen=True, kw_only=True):
    telefones: list[Telefone]
    emails: list[str]
    origem: str
    """Where the contacts come from: `receita_federal` (the CNPJ open data)."""
    validacao: list[Validacao]
    disponibilidade: Disponibilidade


class Opcao(msgspec.Struct, frozen=True, kw_only=True):
    """An option for Simples Nacional or MEI: null `optante` when Receita says nothing."""

    optante: bool | None
    data_opcao: str | None
    data_exclusao: str | None


class Representante(msgspec.Struct, frozen=True, kw_only=True):
    documento: str
    nome: str | None
    qualificacao: Rotulo | None


class Socio(msgspec.Struct, frozen=True, kw_only=True):
    nome: str
    tipo: Rotulo
    documento: str | None
    """CPFs arrive masked by Receita (`***NNNNNN**`); company partners carry their CNPJ."""
    qualificacao: Rotulo | None
    data_entrada: str | None
    faixa_etaria: Rotulo | None
    pais_origem: Rotulo | None
    representante_legal: Representante | None


class InscricaoEstadual(msgspec.Struct, frozen=True, kw_only=True):
    """A state registration (Sintegra) of the establishment in one UF."""

    uf: str
    inscricao_estadual: str
    """Digits only, as the state issues it (`P` first for São Paulo's rural producers)."""
    inscricao_formatada: str
    tipo: str | None
    situacao: str
    habilitada: bool
    """True when the registration may issue invoices (situação HABILITADO)."""
    data_situacao: str | None
    data_inicio: str | None
    regime_apuracao: str | None


class RegimeTributario(msgspec.Struct, frozen=True, kw_only=True):
    """One year of the company's income-tax regime, from Receita's yearly tax-regime files
    (Lucro Real, Lucro Presumido, Lucro Arbitrado, Imunes e Isentas). The regime belongs to the
    company: every establishment of its root carries the same list."""

    ano: int
    forma_de_tributacao: str
    """As Receita writes it: `LUCRO REAL`, `LUCRO PRESUMIDO`, `IMUNE DO IRPJ`..."""
    cnpj_da_scp: str | None
    """The CNPJ of the silent partnership (SCP) the row is about, or null for the company."""
    quantidade_de_escrituracoes: int


class _Cabecalho(msgspec.Struct, frozen=True, kw_only=True):
    """The leading fields of the record, shared by the returned and the stored form."""

    cnpj: str
    cnpj_basico: str
    matriz_filial: Rotulo
    razao_social: str | None
    nome_fantasia: str | None
    situacao_cadastral: Situacao
    abertura: str | None
    natureza_juridica: Rotulo | None
    porte: Rotulo | None
    capital_social: Decimal | None
    qualificacao_responsavel: Rotulo | None
    ente_federativo_responsavel: str | None
    cnae_principal: Cnae | None


class Empresa(_Cabecalho, frozen=True, kw_only=True):
    """The full record of one establishment, as `GET /v1/cnpj/{cnpj}` returns it."""

    cnaes_secundarios: list[Cnae]
    endereco: Endereco
    contato: Contato
    simples: Opcao | None
    mei: Opcao | None
    socios: list[Socio]
    situacao_especial: SituacaoEspecial | None
    inscricoes_estaduais: list[InscricaoEstadual] = msgspec.field(default_factory=list)
    regime_tributario: list[RegimeTributario] = msgspec.field(default_factory=list)
    """The company's tax regime by year, newest first (empty when Receita lists none)."""
    hash: str = ""
    """Content hash of every other field: equal hashes mean an unchanged record."""
    data_referencia: str | None = None
    """The reference date (`YYYY-MM-DD`) of the release that answered: how fresh it is."""


RESTRICTED = ("contato", "socios", "inscricoes_estaduais")
"""Parts of the record that need a key: the same data `/cnpj/contato`, `/socios` and
`/sintegra` serve only to key holders."""


class EmpresaPublica(_Cabecalho, frozen=True, kw_only=True):
    """The record as a caller without a key reads it (the anonymous try-out): everything but
    contacts, partners and state registrations, which `restrito` names."""

    cnaes_secundarios: list[Cnae]
    endereco: Endereco
    simples: Opcao | None
    mei: Opcao | None
    situacao_especial: SituacaoEspecial | None
    regime_tributario: list[RegimeTributario] = msgspec.field(default_factory=list)
    hash: str = ""
    """The content hash of the whole record, as in `Empresa`."""
    data_referencia: str | None = None
    restrito: list[str]
    """Fields left out without a key; send `Authorization: Bearer <API_KEY>` to read them.
    Required, so the public part and the full record are told apart by the document too."""


def public_view(company: Empresa) -> EmpresaPublica:
    """`company` without the parts that need a key."""
    fields = {
        name: getattr(company, name)
        for name in EmpresaPublica.__struct_fields__
        if name != "restrito"
    }
    return EmpresaPublica(**fields, restrito=list(RESTRICTED))


class CnaeSecundario(msgspec.Struct, frozen=True, kw_only=True):
    """A secondary activity as the index stores it: its hierarchy and flags follow from the
    code (`app.domain.cnae.activity`)."""

    codigo: str
    descricao: str | None


class ContatoArmazenado(msgspec.Struct, frozen=True, kw_only=True):
    """The contacts as the index stores them: the checks of `validacao` follow from the phones
    and e-mails (`app.domain.contact.checks`); `disponibilidade` is kept, it is searched."""

    telefones: list[Telefone]
    emails: list[str]
    origem: str
    disponibilidade: Disponibilidade


class Registro(_Cabecalho, frozen=True, kw_only=True):
    """The record as the index stores it (`_source`): what follows from other fields by a fixed
    rule is left out, which makes documents about a fifth smaller and loads faster.
    `app.domain.stored.expand` turns it into the `Empresa` callers get."""

    cnaes_secundarios: list[CnaeSecundario]
    endereco: Endereco
    contato: ContatoArmazenado
    simples: Opcao | None
    mei: Opcao | None
    socios: list[Socio]
    situacao_especial: SituacaoEspecial | None
    inscricoes_estaduais: list[InscricaoEstadual] = msgspec.field(default_factory=list)
    regime_tributario: list[RegimeTributario] = msgspec.field(default_factory=list)
    hash: str = ""
    """Content hash of every other stored field: equal hashes mean an unchanged record."""
    data_referencia: str | None = None
    """The reference date of the release the record was loaded from; after `hash`, so a new
    release of the same data leaves the hash as it was."""


class Busca(msgspec.Struct, frozen=True, kw_only=True):
    """Normalised copies written by the indexer for search; never returned to callers."""

    razao_social: str
    nome_fantasia: str
    socios: list[str]
    socios_chaves: list[str]
    """`<normalised name>|<document>` of each partner, for related companies."""
    socios_documentos: list[str]
    socios_faixas: list[str]
    """`<normalised name>|<faixa etária code>` of each partner."""
    municipio: str
    cnaes: list[str]
    cnae_descricao: str
    inscricoes: list[str] = msgspec.field(default_factory=list)
    """`<UF><inscrição estadual>` of each state registration, for lookups by registration."""
    regimes: list[str] = msgspec.field(default_factory=list)
    """The tax regimes of the newest year listed (`app.domain.codes.REGIMES` keys)."""
    fonetica: str = ""
    """The sound keys of the legal and trade names' words (`app.domain.text.phonetic`), for
    the relaxed pass of the name search."""
    ordem: float = 1.0
    """Where a search of filters alone ranks the establishment (`app.search.names.standing`),
    sorted on instead of scored."""


class Documento(Registro, frozen=True, kw_only=True):
    """What the indexer writes: the record plus its search fields."""

    busca: Busca | None = None
