"""Our SERPRO record against the one the peer project minha-receita publishes for the same rows.

Both sides are data: the peer's answer as it publishes it (`tests/data/minha-receita-serpro.json`,
the example of its `docs/como-usar.md`) and ours as the API serves it, mapped to the peer's
field names. Every field of the peer's JSON is compared, except the fields our record does not
serve yet, named in `NOT_SERVED`; each difference must be one of the deliberate differences
below, with exactly these values (`docs/peer-comparison.md` explains each).
"""

from __future__ import annotations

import csv
import io
import json
import re
import zipfile
from pathlib import Path
from typing import Any

import httpx

from tests.conftest import PEER_DATA, SERPRO

PEER = json.loads((Path(__file__).parent.parent / "data" / "minha-receita-serpro.json").read_text())

NOT_SERVED: frozenset[str] = frozenset()
"""Fields of the peer's record that ours does not serve: left out by name, never faked."""


def _serpro_regimes() -> list[dict[str, Any]]:
    """SERPRO's rows of the release's tax-regime files, in the peer's shape (its
    `response.json` lists `{ano, cnpj_da_scp, forma_de_tributacao, quantidade_de_escrituracoes}`,
    a `cnpj_da_scp` of 0 as null), newest year first, read with the standard library."""
    found = []
    for path in sorted(PEER_DATA.glob("*.zip")):
        with zipfile.ZipFile(path) as archive:
            for member in archive.namelist():
                text = io.TextIOWrapper(archive.open(member), encoding="latin-1", newline="")
                first = text.readline()
                if not first.startswith("ano,cnpj,"):
                    continue
                for row in csv.reader(text):
                    if re.sub(r"\D", "", row[1]) == SERPRO:
                        found.append({
                            "ano": int(row[0]),
                            "cnpj_da_scp": None if row[2] == "0" else row[2],
                            "forma_de_tributacao": row[3],
                            "quantidade_de_escrituracoes": int(row[4]),
                        })  # fmt: skip
    return sorted(found, key=lambda item: -item["ano"])


DELIBERATE = {
    # peer value, our value (after mapping to the peer's shape)
    "capital_social": (1061004800, 1061004829.23),
    "opcao_pelo_simples": (None, True),
    "data_opcao_pelo_simples": (None, "2014-01-01"),
    "opcao_pelo_mei": (None, False),
    "nome_cidade_no_exterior": ("", None),
    "situacao_especial": ("", None),
    # The peer's published example predates its tax-regime support; the release's files list
    # SERPRO under Lucro Presumido 2018, which our record serves.
    "regime_tributario": (None, _serpro_regimes()),
}
DELIBERATE_PARTNER = {
    "cpf_representante_legal": ("***000000**", None),
    "nome_representante_legal": ("", None),
    "codigo_qualificacao_representante_legal": (0, None),
}


def _int(code: str | None) -> int | None:
    return int(code) if code else None


def _phone(phones: list[dict[str, Any]], index: int, kind: str) -> str:
    matching = [p for p in phones if p["tipo"] == kind]
    if len(matching) <= index:
        return ""
    return f"{matching[index]['ddd'] or ''}{matching[index]['numero']}"


def _partner(socio: dict[str, Any]) -> dict[str, Any]:
    representative = socio["representante_legal"] or {}
    qualification = representative.get("qualificacao") or {}
    return {
        "identificador_de_socio": _int(socio["tipo"]["codigo"]),
        "nome_socio": socio["nome"],
        "cnpj_cpf_do_socio": socio["documento"],
        "codigo_qualificacao_socio": _int(socio["qualificacao"]["codigo"]),
        "qualificacao_socio": socio["qualificacao"]["descricao"],
        "data_entrada_sociedade": socio["data_entrada"],
        "codigo_pais": _int((socio["pais_origem"] or {}).get("codigo")),
        "pais": (socio["pais_origem"] or {}).get("descricao"),
        "cpf_representante_legal": representative.get("documento"),
        "nome_representante_legal": representative.get("nome"),
        "codigo_qualificacao_representante_legal": _int(qualification.get("codigo")),
        "qualificacao_representante_legal": qualification.get("descricao"),
        "codigo_faixa_etaria": _int(socio["faixa_etaria"]["codigo"]),
        "faixa_etaria": socio["faixa_etaria"]["descricao"],
    }


def as_peer(record: dict[str, Any]) -> dict[str, Any]:
    """Our nested record in the peer's flat field names and types."""
    address = record["endereco"]
    city = address["municipio"] or {}
    situation = record["situacao_cadastral"]
    principal = record["cnae_principal"]
    phones = record["contato"]["telefones"]
    simples, mei = record["simples"] or {}, record["mei"] or {}
    special = record["situacao_especial"] or {}
    capital = record["capital_social"]
    return {
        "cnpj": record["cnpj"],
        "identificador_matriz_filial": _int(record["matriz_filial"]["codigo"]),
        "descricao_identificador_matriz_filial": record["matriz_filial"]["descricao"],
        "nome_fantasia": record["nome_fantasia"],
        "situacao_cadastral": _int(situation["codigo"]),
        "descricao_situacao_cadastral": situation["descricao"],
        "data_situacao_cadastral": situation["data"],
        "motivo_situacao_cadastral": _int(situation["motivo"]["codigo"]),
        "descricao_motivo_situacao_cadastral": situation["motivo"]["descricao"],
        "nome_cidade_no_exterior": address["cidade_exterior"],
        "codigo_pais": _int((address["pais"] or {}).get("codigo")),
        "pais": (address["pais"] or {}).get("descricao"),
        "data_inicio_atividade": record["abertura"],
        "cnae_fiscal": _int(principal["codigo"]),
        "cnae_fiscal_descricao": principal["descricao"],
        "descricao_tipo_de_logradouro": address["tipo_logradouro"],
        "logradouro": address["logradouro"],
        "numero": address["numero"],
        "complemento": address["complemento"],
        "bairro": address["bairro"],
        "cep": address["cep"],
        "uf": address["uf"],
        "codigo_municipio": _int(city.get("codigo")),
        "codigo_municipio_ibge": _int(city.get("codigo_ibge")),
        "municipio": city.get("nome"),
        "ddd_telefone_1": _phone(phones, 0, "telefone"),
        "ddd_telefone_2": _phone(phones, 1, "telefone"),
        "ddd_fax": _phone(phones, 0, "fax"),
        "situacao_especial": special.get("descricao"),
        "data_situacao_especial": special.get("data"),
        "opcao_pelo_simples": simples.get("optante"),
        "data_opcao_pelo_simples": simples.get("data_opcao"),
        "data_exclusao_do_simples": simples.get("data_exclusao"),
        "opcao_pelo_mei": mei.get("optante"),
        "data_opcao_pelo_mei": mei.get("data_opcao"),
        "data_exclusao_do_mei": mei.get("data_exclusao"),
        "razao_social": record["razao_social"],
        "codigo_natureza_juridica": _int(record["natureza_juridica"]["codigo"]),
        "natureza_juridica": record["natureza_juridica"]["descricao"],
        "qualificacao_do_responsavel": _int(record["qualificacao_responsavel"]["codigo"]),
        "capital_social": capital,
        "codigo_porte": _int(record["porte"]["codigo"]),
        "porte": record["porte"]["descricao"],
        "ente_federativo_responsavel": record["ente_federativo_responsavel"],
        "qsa": [_partner(socio) for socio in record["socios"]],
        "regime_tributario": record["regime_tributario"] or None,
        "cnaes_secundarios": [
            {"codigo": _int(c["codigo"]), "descricao": c["descricao"]}
            for c in record["cnaes_secundarios"]
        ],
    }


def test_serpro_record_matches_peer_field_by_field(api: httpx.Client) -> None:
    ours = as_peer(api.get(f"/v1/cnpj/{SERPRO}").json())
    assert NOT_SERVED.issubset(PEER)
    assert set(ours) == set(PEER) - NOT_SERVED
    differences = {
        field: (PEER[field], ours[field])
        for field in ours
        if field != "qsa" and PEER[field] != ours[field]
    }
    assert differences == DELIBERATE
    assert len(ours["qsa"]) == len(PEER["qsa"]) == 6
    for peer_partner, our_partner in zip(PEER["qsa"], ours["qsa"], strict=True):
        partner_differences = {
            field: (peer_partner[field], our_partner[field])
            for field in peer_partner
            if peer_partner[field] != our_partner[field]
        }
        assert partner_differences == DELIBERATE_PARTNER, peer_partner["nome_socio"]


def test_regime_entries_have_the_peer_shape(api: httpx.Client) -> None:
    """Our tax-regime entries carry exactly the fields of the peer's (its full expected answer
    for another company, `response.json` of its test data), with the same types."""
    peer = json.loads((PEER_DATA / "response.json").read_text())["regime_tributario"]
    ours = api.get(f"/v1/cnpj/{SERPRO}").json()["regime_tributario"]
    assert ours
    assert peer
    shape = {key: type(value) for key, value in peer[0].items()}
    for entry in ours:
        assert {key: type(value) for key, value in entry.items()} == shape
    assert [e["ano"] for e in peer] == sorted(e["ano"] for e in peer)  # the peer: oldest first
