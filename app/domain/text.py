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
    "alim": "alimentos",
    "assess": "assessoria",
    "assoc": "associacao",
    "bco": "banco",
    "cia": "companhia",
    "com": "comercio",
    "coml": "comercial",
    "confec": "confeccoes",
    "constr": "construcoes",
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
    "mat": "materiais",
    "mats": "materiais",
    "part": "participacoes",
    "partic": "participacoes",
    "particip": "participacoes",
    "prod": "produtos",
    "repr": "representacoes",
    "repres": "representacoes",
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
    """Folded tokens of `text`, with glued initials (`S.A.`, `S/A`, `C&A`) joined, and so are
    initials joined by a word (`P E L`, `W AND A`: `pl`, `wa`, as `P & L` is)."""
    folded = fold(text)
    if "." in folded or "/" in folded or "&" in folded:
        folded = _GLUED.sub(lambda match: _GLUE.sub("", match.group()), folded)
    found = _TOKEN.findall(folded)
    return _join_initials(found) if "e" in found or "and" in found else found


def _join_initials(found: list[str]) -> list[str]:
    """`a e b` and `a and b` (single letters or digits) as one token `ab`; chains too."""
    joined: list[str] = []
    i = 0
    while i < len(found):
        word = found[i]
        if len(word) == 1:
            while i + 2 < len(found) and found[i + 1] in ("e", "and") and len(found[i + 2]) == 1:
                word += found[i + 2]
                i += 2
        joined.append(word)
        i += 1
    return joined


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


def has_phrase(name: str, phrase: str) -> bool:
    """Whether the normalised `name` holds the normalised `phrase` as whole words in a row, as
    a phrase search on the name matches it."""
    return f" {phrase} " in f" {name} "


def is_code(text: str) -> bool:
    """Whether `text` is only ASCII digits (and not empty): `str.isdigit` also takes ², ٤ and
    full-width digits, which no code of Receita or IBGE is written with."""
    return text.isascii() and text.isdigit()


TYPED_CODE = re.compile(r"[0-9 ./\-]+")
"""A code as people write it (`4711-3/02`, `80.010`): ASCII digits, the dots, slash and dash of
its formatting, and plain spaces. A digit of another script, a control character, a tab or another
kind of space is no part of a code (`digits` would drop it): refused, not dropped."""


def trim(text: str) -> str:
    """`text` without the plain spaces around it. Only plain spaces: a tab, a line break or another
    kind of space around a value is not spacing people type, and is left for the value's check to
    refuse (`TYPED_CODE`, a state's sigla, a CNPJ)."""
    return text.strip(" ")


def digits(text: str) -> str:
    """Only the ASCII digits of `text` (phones, CEP, codes)."""
    return "".join(char for char in text if "0" <= char <= "9")


def partner_key(name: str, document: str | None) -> str:
    """Normalised name and document as Receita shows it (CPFs masked): the pair that ties the
    same person or company to each of its companies."""
    return f"{normalize_name(name)}|{document or ''}"


CONNECTORS: frozenset[str] = frozenset({"e", "and", "de", "da", "do", "das", "dos", "of"})
"""Words that join the words of a name (`SANTOS E FILHOS`, `SANTOS & FILHOS`, `CASA DO PAO`):
people type them, drop them, or write `&` as `e` or `and`."""

_PHONETIC_RULES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), replacement)
    for pattern, replacement in (
        (r"ph", "f"),
        (r"th", "t"),
        (r"ch(?=[rl])", "k"),
        (r"[cs]h", "x"),
        (r"h", ""),
        (r"qu?", "k"),
        (r"gu(?=[eiy])", "G"),
        (r"g(?=[eiy])", "j"),
        (r"G", "g"),
        (r"sc(?=[eiy])", "s"),
        (r"c(?=[eiy])", "s"),
        (r"c", "k"),
        (r"y", "i"),
        (r"w", "v"),
        (r"z", "s"),
        (r"([a-z])\1+", r"\1"),
    )
)


@lru_cache(maxsize=1 << 16)
def phonetic(word: str) -> str:
    """A sound key of one folded word (`[a-z0-9]`) as Brazilian Portuguese spells it, so the
    spellings names really vary in meet: `K`/`C`/`QU`, `Y`/`I`, a silent `H`, `PH`/`F`,
    `W`/`V`, `Z`/`S`, `G`/`J` before `E` and `I`, `C`/`S` before `E` and `I`, `CH`/`SH`/`X`,
    doubled letters (`KAROLINE`, `CAROLINE`, `CAROLLINE` -> `karoline`; `HELENA`, `ELENA` ->
    `elena`; `GEOVANA`, `JEOVANA` -> `jeovana`). Digits are kept as they are."""
    if not word.isalpha():
        return word
    for pattern, replacement in _PHONETIC_RULES:
        word = pattern.sub(replacement, word)
    return word


def phonetic_name(text: str) -> str:
    """The sound keys of a name's words (as `normalize_name` reads them), connectors left
    out: what the name search compares them with (`busca.fonetica`)."""
    return " ".join(
        phonetic(word) for word in normalize_name(text).split() if word not in CONNECTORS
    )
