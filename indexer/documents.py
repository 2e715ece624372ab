"""Build the index document of one establishment from its joined staging row."""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections.abc import Mapping, Sequence
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any

import msgspec

from app.domain import codes, state_registration
from app.domain.cnae import activity
from app.domain.codes import code_key
from app.domain.contact import availability
from app.domain.record import (
    Busca,
    Cnae,
    CnaeSecundario,
    ContatoArmazenado,
    Documento,
    Endereco,
    InscricaoEstadual,
    Municipio,
    Opcao,
    RegimeTributario,
    Representante,
    Rotulo,
    Situacao,
    SituacaoEspecial,
    Socio,
    Telefone,
)
from app.domain.text import normalize, normalize_name, partner_key, phonetic_name
from app.search.names import standing
from indexer.references import References, remember
from indexer.sources import Kind
from indexer.staging import Joined

ENCODER = msgspec.json.Encoder(decimal_format="number")
_EMPTY_HASH = b'"hash":""'

_SITUACAO = {code_key(k): v for k, v in codes.SITUACAO_CADASTRAL.items()}
_PORTE = {code_key(k): v for k, v in codes.PORTE.items()}
_NO_CODE = Rotulo(codigo="", descricao=None)
_NO_ROW = [""] * 8
"""The fields of a company or Simples row the release lacks: all empty."""


def text(value: str | None) -> str | None:
    """Trimmed text, or None when empty."""
    return (value.strip() or None) if value else None


@lru_cache(maxsize=1 << 17)
def iso_date(value: str | None) -> str | None:
    """`YYYYMMDD` -> `YYYY-MM-DD`; None for Receita's "no date" values and impossible dates."""
    if not value or len(value) != 8 or not value.isdigit() or value == "00000000":
        return None
    try:
        return dt.date(int(value[:4]), int(value[4:6]), int(value[6:])).isoformat()
    except ValueError:
        return None


MAX_CAPITAL = Decimal(10) ** 15
"""Past any share capital on record (and the search filters' bound): a larger figure is a
typo or garbage, and as a double (`1E+400` is infinite) Elasticsearch would refuse the whole
document."""


_AMOUNT = re.compile(r"[0-9][0-9.,]*")
"""An amount as Receita writes it (`1061004829,23`), or with thousands dots (`1.234,56`)."""


def capital(value: str | None) -> Decimal | None:
    """Exact share capital from `1061004829,23` (or `1.234,56`); None when unreadable."""
    raw = (value or "").strip()
    if not raw or not _AMOUNT.fullmatch(raw):  # `Decimal` reads ١٢٣, `1_000` and `1e14` too
        return None
    if "," in raw:
        raw = raw.replace(".", "").replace(",", ".")
    try:
        amount = Decimal(raw)
    except InvalidOperation:
        return None
    return amount if amount.is_finite() and amount.copy_abs() < MAX_CAPITAL else None


def _fixed(code: str | None, table: Mapping[str, str]) -> Rotulo | None:
    code = text(code)
    return Rotulo(codigo=code, descricao=table.get(code_key(code))) if code else None


def _secondary_codes(value: str | None, principal: str | None) -> list[str]:
    seen = {principal} if principal else set()
    found = []
    for part in (value or "").split(","):
        code = part.strip()
        if code and code.isdigit():
            code = code.zfill(7)
            if code not in seen:
                seen.add(code)
                found.append(code)
    return found


def _phones(row: Sequence[Any]) -> list[Telefone]:
    phones = []
    for ddd_index, kind in ((21, "telefone"), (23, "telefone"), (25, "fax")):
        number = text(row[ddd_index + 1])
        if number:
            phones.append(Telefone(ddd=text(row[ddd_index]), numero=number, tipo=kind))
    return phones


def _contact(phones: list[Telefone], email: str | None) -> ContatoArmazenado:
    emails = [email.lower()] if email else []
    return ContatoArmazenado(
        telefones=phones,
        emails=emails,
        origem="receita_federal",
        disponibilidade=availability(phones, emails),
    )


def _option(flag: str | None, start: str | None, end: str | None) -> Opcao:
    choice = text(flag)
    optante = True if choice == "S" else False if choice == "N" else None
    return Opcao(optante=optante, data_opcao=iso_date(start), data_exclusao=iso_date(end))


def _registrations(items: Sequence[Sequence[str]]) -> list[InscricaoEstadual]:
    """The registrations of one establishment (`staging.INSCRICAO_COLUMNS`), one per
    (UF, number), in staging order."""
    seen: set[tuple[str, str]] = set()
    registrations = []
    for uf, number, tipo, situacao, data_situacao, data_inicio, regime in items:
        key = (uf, number)
        if key in seen:
            continue
        seen.add(key)
        registrations.append(
            InscricaoEstadual(
                uf=uf,
                inscricao_estadual=number,
                inscricao_formatada=state_registration.formatted(*key),
                tipo=tipo or None,
                situacao=situacao,
                habilitada=situacao == state_registration.SITUACOES["habilitado"],
                data_situacao=iso_date(data_situacao),
                data_inicio=iso_date(data_inicio),
                regime_apuracao=regime or None,
            )
        )
    return registrations


def _regimes(items: Sequence[Sequence[str]]) -> list[RegimeTributario]:
    """The company's tax regimes (`staging.REGIME_COLUMNS`), newest year first, one per (year,
    SCP, form): the same row listed for two establishments of the root is kept once."""
    seen: set[tuple[str, str, str]] = set()
    regimes = []
    for ano, scp, forma, quantidade in items:
        key = (ano, scp, forma)
        if key in seen:
            continue
        seen.add(key)
        regimes.append(
            RegimeTributario(
                ano=int(ano),
                forma_de_tributacao=forma,
                cnpj_da_scp=scp or None,
                quantidade_de_escrituracoes=int(quantidade),
            )
        )
    return regimes


def _latest_regimes(regimes: list[RegimeTributario]) -> list[str]:
    """The filter values of the company's own rows (not an SCP's) of its newest year."""
    own = [regime for regime in regimes if regime.cnpj_da_scp is None] or regimes
    if not own:
        return []
    newest = max(regime.ano for regime in own)
    found = (codes.regimes(r.forma_de_tributacao) for r in own if r.ano == newest)
    return sorted({value for values in found for value in values})


def _sound_keys(*names: str | None) -> str:
    """The sound keys of the names' words, each once."""
    keys = (phonetic_name(name) for name in names if name)
    return " ".join(dict.fromkeys(word for key in keys for word in key.split()))


class Builder:
    """Builds documents from joined rows. Values shared by many records (labelled codes,
    CNAEs, municipalities, fixed labels) are built once and reused: they are frozen."""

    def __init__(self, refs: References, data_referencia: str | None = None) -> None:
        self.refs = refs
        self.data_referencia = data_referencia
        """The release's reference date, carried by every record."""
        self._cnaes: dict[str, Cnae] = {}
        self._secondary: dict[str, CnaeSecundario] = {}
        self._municipios: dict[str, tuple[Municipio, str]] = {}
        self._fixed: dict[tuple[int, str], Rotulo | None] = {}
        self._normalized_cnae: dict[str, str] = {}

    def referenced(self, kind: Kind, code: str | None) -> Rotulo | None:
        code = text(code)
        return self.refs.rotulo(kind, code) if code else None

    def fixed(self, code: str | None, table: Mapping[str, str], name: str) -> Rotulo | None:
        """`code` with its label in one of Receita's fixed tables (`app.domain.codes`); a code
        the table lacks is kept, with no label, and counted as missing from `name`, as the
        codes of the reference files are (Receita's own files hold a few: situação `07`)."""
        key = (id(table), code or "")
        found = (
            self._fixed[key]
            if key in self._fixed
            else remember(self._fixed, key, _fixed(code, table))
        )
        if found is not None and found.descricao is None:
            self.refs.count_missing(name, found.codigo)
        return found

    def situacao(self, code: str | None) -> tuple[str, str | None]:
        """A situação cadastral's code and label (a code the table lacks is counted)."""
        found = text(code) or ""
        label = _SITUACAO.get(code_key(found))
        if found and label is None:
            self.refs.count_missing("situacao_cadastral", found)
        return found, label

    def cnae(self, code: str) -> Cnae:
        """The principal activity `code` (seven digits) with its label and hierarchy."""
        found = self._cnaes.get(code)
        if found is None:
            found = remember(
                self._cnaes, code, activity(code, self.refs.label(Kind.CNAES, code), True)
            )
        if found.descricao is None:
            self.refs.count_missing(Kind.CNAES.value, code)
        return found

    def secondary(self, code: str) -> CnaeSecundario:
        """A secondary activity (seven digits) with its label."""
        found = self._secondary.get(code)
        if found is None:
            label = self.refs.label(Kind.CNAES, code)
            found = remember(self._secondary, code, CnaeSecundario(codigo=code, descricao=label))
        if found.descricao is None:
            self.refs.count_missing(Kind.CNAES.value, code)
        return found

    def municipio(self, code: str) -> tuple[Municipio, str]:
        """The municipality and its normalised name."""
        found = self._municipios.get(code)
        if found is None:
            cidade = self.refs.ibge.get(code_key(code))
            nome = self.refs.rotulo(Kind.MUNICIPIOS, code).descricao
            nome = nome or (cidade.nome.upper() if cidade else None)
            municipio = Municipio(
                codigo=code, codigo_ibge=cidade.codigo_ibge if cidade else None, nome=nome
            )
            found = remember(self._municipios, code, (municipio, normalize(nome or "")))
        return found

    def cnae_words(self, cnae: Cnae) -> str:
        found = self._normalized_cnae.get(cnae.codigo)
        if found is None:
            found = remember(self._normalized_cnae, cnae.codigo, normalize(cnae.descricao or ""))
        return found

    def partner(self, item: Sequence[str]) -> Socio:
        """A partner from its staged fields (`staging.SOCIO_COLUMNS`)."""
        representative_doc = text(item[7])
        representative_name = text(item[8])
        representative = None
        if (representative_doc and representative_doc != codes.NO_REPRESENTATIVE) or (
            representative_name
        ):
            representative = Representante(
                documento=representative_doc or "",
                nome=representative_name,
                qualificacao=self.referenced(Kind.QUALIFICACOES, item[9]),
            )
        return Socio(
            nome=text(item[2]) or "",
            tipo=self.fixed(item[1], codes.TIPO_SOCIO, "identificador_socio") or _NO_CODE,
            documento=text(item[3]),
            qualificacao=self.referenced(Kind.QUALIFICACOES, item[4]),
            data_entrada=iso_date(item[5]),
            faixa_etaria=self.fixed(item[10], codes.FAIXA_ETARIA, "faixa_etaria"),
            pais_origem=self.referenced(Kind.PAISES, item[6]),
            representante_legal=representative,
        )

    def build(self, joined: Joined) -> Documento:
        """The document of one joined row. Empty fields are None, as Receita means them."""
        row = joined.estabelecimento
        company = joined.empresa or _NO_ROW
        option = joined.simples or _NO_ROW
        root, order, digits = row[0], row[1], row[2]
        has_company = joined.empresa is not None
        municipio_code = text(row[20])
        municipio, municipio_words = (
            self.municipio(municipio_code) if municipio_code else (None, "")
        )
        principal_code = text(row[11])
        principal = self.cnae(principal_code.zfill(7)) if principal_code else None
        secondary = [
            self.secondary(code)
            for code in _secondary_codes(row[12], principal.codigo if principal else None)
        ]
        partners = [self.partner(item) for item in joined.socios]
        email = text(row[27])
        razao_social = text(company[1])
        nome_fantasia = text(row[4])
        especial = text(row[28])
        registrations = _registrations(joined.inscricoes)
        regimes = _regimes(joined.regimes)
        situacao, situacao_label = self.situacao(row[5])
        matriz_filial = self.fixed(row[3], codes.MATRIZ_FILIAL, "matriz_filial") or _NO_CODE
        return Documento(
            cnpj=f"{root}{order}{digits}",
            cnpj_basico=root,
            matriz_filial=matriz_filial,
            razao_social=razao_social,
            nome_fantasia=nome_fantasia,
            situacao_cadastral=Situacao(
                codigo=situacao,
                descricao=situacao_label,
                data=iso_date(row[6]),
                motivo=self.referenced(Kind.MOTIVOS, row[7]),
            ),
            abertura=iso_date(row[10]),
            natureza_juridica=self.referenced(Kind.NATUREZAS, company[2]) if has_company else None,
            porte=self.fixed(company[5], _PORTE, "porte") if has_company else None,
            capital_social=capital(company[4]),
            qualificacao_responsavel=(
                self.referenced(Kind.QUALIFICACOES, company[3]) if has_company else None
            ),
            ente_federativo_responsavel=text(company[6]),
            cnae_principal=principal,
            cnaes_secundarios=secondary,
            endereco=Endereco(
                tipo_logradouro=text(row[13]),
                logradouro=text(row[14]),
                numero=text(row[15]),
                complemento=text(row[16]),
                bairro=text(row[17]),
                cep=text(row[18]),
                municipio=municipio,
                uf=text(row[19]),
                pais=self.referenced(Kind.PAISES, row[9]),
                cidade_exterior=text(row[8]),
            ),
            contato=_contact(_phones(row), email),
            simples=_option(*option[1:4]) if option[1] else None,
            mei=_option(*option[4:7]) if option[4] else None,
            socios=partners,
            situacao_especial=SituacaoEspecial(descricao=especial, data=iso_date(row[29]))
            if especial
            else None,
            inscricoes_estaduais=registrations,
            regime_tributario=regimes,
            data_referencia=self.data_referencia,
            busca=Busca(
                razao_social=normalize_name(razao_social or ""),
                nome_fantasia=normalize_name(nome_fantasia or ""),
                socios=[normalize_name(partner.nome) for partner in partners],
                socios_chaves=[partner_key(p.nome, p.documento) for p in partners],
                socios_documentos=[p.documento for p in partners if p.documento],
                socios_faixas=[
                    partner_key(p.nome, p.faixa_etaria.codigo) for p in partners if p.faixa_etaria
                ],
                municipio=municipio_words,
                cnaes=[c.codigo for c in ([principal] if principal else []) + secondary],
                cnae_descricao=self.cnae_words(principal) if principal else "",
                inscricoes=[f"{r.uf}{r.inscricao_estadual}" for r in registrations],
                regimes=_latest_regimes(regimes),
                fonetica=_sound_keys(razao_social, nome_fantasia),
                ordem=standing(situacao, matriz_filial.codigo),
            ),
        )


def encode(document: Documento) -> tuple[bytes, str]:
    """JSON of the document with its content hash filled in, and the hash.

    The hash covers the record's own fields, which all come before `hash` in the encoding (the
    search fields of `busca` come after it), so changing how records are indexed never makes
    them look changed. It is spliced into the one `"hash":""` of the encoding (inside JSON
    strings every quote is escaped, so that sequence can only be the key itself) to avoid
    encoding each document twice.
    """
    body = ENCODER.encode(document)
    cut = body.index(_EMPTY_HASH)
    digest = hashlib.blake2b(memoryview(body)[:cut], digest_size=16).hexdigest()
    return body[:cut] + b'"hash":"' + digest.encode() + b'"' + body[
        cut + len(_EMPTY_HASH) :
    ], digest
