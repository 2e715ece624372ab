"""Labels of the fixed Receita codes, those that have no reference table of their own."""

from __future__ import annotations

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

UFS = [
    "AC",
    "AL",
    "AM",
    "AP",
    "BA",
    "CE",
    "DF",
    "ES",
    "GO",
    "MA",
    "MG",
    "MS",
    "MT",
    "PA",
    "PB",
    "PE",
    "PI",
    "PR",
    "RJ",
    "RN",
    "RO",
    "RR",
    "RS",
    "SC",
    "SE",
    "SP",
    "TO",
]
"""The 27 federative units; Receita also writes `EX` for addresses abroad."""

NO_REPRESENTATIVE = "***000000**"


def code_key(code: str) -> str:
    """Lookup key of a numeric code, insensitive to left zero padding (`"005"` == `"5"`)."""
    stripped = code.strip().lstrip("0")
    return stripped or ("0" if code.strip() else "")
