"""Labels of the fixed Receita codes, those that have no reference table of their own."""

from __future__ import annotations

from typing import Literal, get_args

SITUACAO_CADASTRAL = {
    "01": "NULA",
    "02": "ATIVA",
    "03": "SUSPENSA",
    "04": "INAPTA",
    "08": "BAIXADA",
}

MATRIZ_FILIAL = {"1": "MATRIZ", "2": "FILIAL"}

PORTE = {
    "00": "NÃO INFORMADO",
    "01": "MICRO EMPRESA",
    "03": "EMPRESA DE PEQUENO PORTE",
    "05": "DEMAIS",
}

TIPO_SOCIO = {"1": "PESSOA JURÍDICA", "2": "PESSOA FÍSICA", "3": "ESTRANGEIRO"}

FAIXA_ETARIA = {
    "0": "Não se aplica",
    "1": "Entre 0 a 12 anos",
    "2": "Entre 13 a 20 anos",
    "3": "Entre 21 a 30 anos",
    "4": "Entre 31 a 40 anos",
    "5": "Entre 41 a 50 anos",
    "6": "Entre 51 a 60 anos",
    "7": "Entre 61 a 70 anos",
    "8": "Entre 71 a 80 anos",
    "9": "Maiores de 80 anos",
}

UF = Literal[
    "AC", "AL", "AM", "AP", "BA", "CE", "DF", "ES", "GO", "MA", "MG", "MS", "MT", "PA",
    "PB", "PE", "PI", "PR", "RJ", "RN", "RO", "RR", "RS", "SC", "SE", "SP", "TO",
]  # fmt: skip
"""A federative unit's abbreviation, as a type (the enum agents see in tool schemas)."""
ADDRESS_UF = Literal[
    "AC", "AL", "AM", "AP", "BA", "CE", "DF", "ES", "GO", "MA", "MG", "MS", "MT", "PA",
    "PB", "PE", "PI", "PR", "RJ", "RN", "RO", "RR", "RS", "SC", "SE", "SP", "TO", "EX",
]  # fmt: skip
"""An address's UF as a type: a federative unit, or `EX` for an address abroad."""
UFS: list[str] = list(get_args(UF))
"""The 27 federative units."""
ABROAD = "EX"
ADDRESS_UFS: list[str] = list(get_args(ADDRESS_UF))
"""What an establishment's address has for its UF: a federative unit, or `EX` abroad."""


NO_REPRESENTATIVE = "***000000**"


def code_key(code: str) -> str:
    """Lookup key of a numeric code, insensitive to left zero padding (`"005"` == `"5"`)."""
    stripped = code.strip().lstrip("0")
    return stripped or ("0" if code.strip() else "")


UF_NOMES = {
    "AC": "Acre", "AL": "Alagoas", "AM": "Amazonas", "AP": "Amapá", "BA": "Bahia",
    "CE": "Ceará", "DF": "Distrito Federal", "ES": "Espírito Santo", "GO": "Goiás",
    "MA": "Maranhão", "MG": "Minas Gerais", "MS": "Mato Grosso do Sul", "MT": "Mato Grosso",
    "PA": "Pará", "PB": "Paraíba", "PE": "Pernambuco", "PI": "Piauí", "PR": "Paraná",
    "RJ": "Rio de Janeiro", "RN": "Rio Grande do Norte", "RO": "Rondônia", "RR": "Roraima",
    "RS": "Rio Grande do Sul", "SC": "Santa Catarina", "SE": "Sergipe", "SP": "São Paulo",
    "TO": "Tocantins",
}  # fmt: skip
"""Each UF's name, as IBGE writes it."""
ADDRESS_UF_NOMES = {**UF_NOMES, ABROAD: "Exterior"}
"""`UF_NOMES`, and what an address abroad is called."""

UF_IBGE = {
    "RO": "11", "AC": "12", "AM": "13", "RR": "14", "PA": "15", "AP": "16", "TO": "17",
    "MA": "21", "PI": "22", "CE": "23", "RN": "24", "PB": "25", "PE": "26", "AL": "27",
    "SE": "28", "BA": "29", "MG": "31", "ES": "32", "RJ": "33", "SP": "35", "PR": "41",
    "SC": "42", "RS": "43", "MS": "50", "MT": "51", "GO": "52", "DF": "53",
}  # fmt: skip
"""Each UF's IBGE code (the first two digits of its municipalities' codes)."""

REGIMES = {
    "lucro_real": "REAL",
    "lucro_presumido": "PRESUMIDO",
    "lucro_arbitrado": "ARBITRADO",
    "imune": "IMUNE",
    "isenta": "ISENTA",
}
"""Tax-regime filter values, each with the word that marks it in Receita's `forma_de_tributacao`
(a mixed form such as `LUCRO PRESUMIDO/LUCRO ARBITRADO` has both)."""


def regimes(forma: str) -> list[str]:
    """The filter values a `forma_de_tributacao` belongs to."""
    words = forma.upper()
    return [key for key, word in REGIMES.items() if word in words]
