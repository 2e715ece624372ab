"""Text normalisation shared by the indexer (normalised fields) and every query builder.

Index time and query time call the same functions, so they cannot drift apart, and the index
mappings need nothing beyond the standard tokenizer and lowercase filter that every
Elasticsearch distribution has (the minimal one has no asciifolding or char filters).

Every function here is total (never raises) and idempotent: `f(f(x)) == f(x)`. The output
alphabet is `[a-z0-9 ]`.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

# Single letters or digits glued by dots, slashes or ampersands form one token:
# "S.A." -> "sa", "S/A" -> "sa", "C&A" -> "ca", "M.E." -> "me".
_GLUED = re.compile(r"(?<![a-z0-9])[a-z0-9](?:\s*[./&]\s*[a-z0-9](?![a-z0-9]))+[./]?")
_GLUE = re.compile(r"[\s./&]")
_TOKEN = re.compile(r"[a-z0-9]+")

# Abbreviations common in Receita's company names, mapped to the word they stand for. No value
# is also a key, which keeps the expansion idempotent.
ABBREVIATIONS: dict[str, str] = {
    "adm": "administracao",
    "admin": "administracao",
    "assoc": "associacao",
    "bco": "banco",
    "cia": "companhia",
    "com": "comercio",
    "coml": "comercial",
    "coop": "cooperativa",
    "dist": "distribuidora",
    "distr": "distribuidora",
    "distrib": "distribuidora",
    "emp": "empreendimentos",
    "empr": "empreendimentos",
    "empreend": "empreendimentos",
    "eng": "engenharia",
    "equip": "equipamentos",
    "exp": "exportacao",
    "imp": "importacao",
    "ind": "industria",
    "inds": "industrias",
    "inst": "instituto",
    "part": "participacoes",
    "partic": "participacoes",
    "particip": "participacoes",
    "prod": "produtos",
    "serv": "servicos",
    "servs": "servicos",
    "soc": "sociedade",
    "transp": "transportes",
}

# Legal-form suffixes: they say what kind of company it is, not which one.
COMPANY_SUFFIXES: frozenset[str] = frozenset(
    {"ltda", "limitada", "me", "epp", "eireli", "sa", "ss", "slu", "mei", "ei"}
)


def fold(text: str) -> str:
    """Lower-case and drop accents and cedillas: `"Ação"` -> `"acao"`."""
    if text.isascii():
        return text.lower()
    # Latin letters with accents (nearly every non-ASCII character of Receita's files) go
    # through a table; anything else takes the full Unicode path, which gives the same result.
    translated = text.translate(_LATIN)
    return translated.lower() if translated.isascii() else _fold_unicode(text)


_TRANSLITERATIONS = str.maketrans(
    {
        "Æ": "AE", "æ": "ae", "Ð": "D", "ð": "d", "Ø": "O", "ø": "o", "Þ": "TH", "þ": "th",
        "Œ": "OE", "œ": "oe", "Ł": "L", "ł": "l", "Đ": "D", "đ": "d", "Ħ": "H", "ħ": "h",
        "Ŧ": "T", "ŧ": "t", "Ŋ": "N", "ŋ": "n", "ı": "i", "Ŀ": "L", "ŀ": "l",
    }
)  # fmt: skip
"""Latin letters that are not an accented base letter (no Unicode decomposition, or one that
adds a symbol, as `ŀ` = `l·`), spelled as people type them (the ASCII folding of Lucene)."""


def _fold_unicode(text: str) -> str:
    # Marks go before case folding: some combining marks fold to letters (U+0345 -> iota).
    lowered = _strip_marks(text.translate(_TRANSLITERATIONS)).casefold()
    return lowered if lowered.isascii() else _strip_marks(lowered)


def _strip_marks(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(char for char in decomposed if not unicodedata.combining(char))


_LATIN = {
    code: folded for code in range(0x80, 0x250) if (folded := _fold_unicode(chr(code))).isascii()
}
"""Latin-1 and Latin Extended letters whose folded form is ASCII, folded once."""


def tokens(text: str) -> list[str]:
    """Folded tokens of `text`, with glued initials (`S.A.`, `S/A`, `C&A`) joined."""
    folded = fold(text)
    if "." in folded or "/" in folded or "&" in folded:
        folded = _GLUED.sub(lambda match: _GLUE.sub("", match.group()), folded)
    return _TOKEN.findall(folded)


def normalize(text: str) -> str:
    """Folded words separated by single spaces; punctuation is a separator."""
    return " ".join(tokens(text))


def name_tokens(text: str) -> list[str]:
    """Tokens of a company or person name: abbreviations expanded, trailing legal suffixes
    (LTDA, ME, EPP, EIRELI, S.A., S/S...) removed."""
    words = [ABBREVIATIONS.get(word, word) for word in tokens(text)]
    while words and words[-1] in COMPANY_SUFFIXES:
        words.pop()
    return words


MAX_NAME = 256
"""Characters of a name that are normalised. Receita's names are at most 150; the cap bounds
what the cache below keeps, whatever a caller sends."""


def normalize_name(text: str) -> str:
    """The normalised form of a company or person name, as indexed and as queried."""
    return _normalize_name(text[:MAX_NAME])


@lru_cache(maxsize=1 << 16)
def _normalize_name(text: str) -> str:
    return " ".join(name_tokens(text))


def digits(text: str) -> str:
    """Only the ASCII digits of `text` (phones, CEP, codes)."""
    return "".join(char for char in text if "0" <= char <= "9")


def partner_key(name: str, document: str | None) -> str:
    """Normalised name and document as Receita shows it (CPFs masked): the pair that ties the
    same person or company to each of its companies."""
    return f"{normalize_name(name)}|{document or ''}"
