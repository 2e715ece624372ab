"""The name query: finds the company the analyst means from a sloppy name.

The text goes through `app.domain.text.name_tokens` (accents, case, punctuation, legal suffixes,
abbreviations), the same function the indexer used for `busca.*`, so both sides agree. Then one
query tolerates what is left:

- word order and missing words' order: every word must match, in any order (`operator: and`),
  but for connector words (`e`, `and`, `de`, `da`, `do`...), which names write, drop or spell as
  `&`: those only rank;
- a typo per word: one edit in a word of 3 letters or more (`TYPO_FUZZINESS`), past the first
  letter (`prefix_length: 1`, which makes the fuzzy expansion several times cheaper); a word
  with two typos is left to the relaxed query below, since allowing two edits here made this
  query four times dearer (`docs/api.md`, "The tolerant pass at one edit a word");
- prefixes while typing: `match_bool_prefix` on the last word (served by `index_prefixes`);
- a name spelled as it sounds: every word's sound key (`busca.fonetica`) matches;
- joined or split words: the `.juntas` fields also index each pair of adjacent words glued
  together (`bompreco` for `BOM PRECO`), and the query tries each adjacent pair of its own words
  glued, so `BOM PRECO` finds `BOMPRECO` and the other way round.

Ranking adds on top: an exact normalised name, then the words in the user's order (pairs of
adjacent words shared with the legal name's `.frases` shingles; a phrase on the trade name),
then active establishments and the matriz, each as a fixed boost so equal matches are ordered
by them.
User text never reaches a query parser: `*`, `"`, `AND`, `/regex/` or `~` are plain characters
that normalisation drops or keeps as words.

The words as typed are tried first (the same query without the typo per word, cheaper: the
fuzzy expansions are a name query's main cost): when they find a company, the typo-tolerant
query would rank the same exact matches first, so it runs only when they find none.

When the strict query finds no company either, the search runs a relaxed one (`relaxed_query`):
not every word has to match (one of one or two words, two of three, three quarters of more: the
rarest words weigh most), a typo may touch the first letter, a word of six letters or more may
have two, and the words' sound keys (`busca.fonetica`, `app.domain.text.phonetic`) meet the
spellings names vary in (`K`/`C`, `Y`/`I`, a silent `H`, `G`/`J`, `PH`/`F`, `W`/`V`, `Z`/`S`,
doubled letters).
"""

from __future__ import annotations

from typing import Any

from app.domain.text import COMPANY_SUFFIXES, CONNECTORS, name_tokens, phonetic, tokens

MAX_WORDS = 8
PREFIX_LENGTH = 1
TYPO_FUZZINESS = "AUTO:3,30"
"""The typo-tolerant pass: no edit under 3 letters, one from 3 (two only from 30, which no word
of a name reaches)."""
EXACT_BOOST = 30.0
PHRASE_BOOST = 6.0
PREFIX_BOOST = 3.0
ACTIVE_BOOST = 1.5
MATRIZ_BOOST = 0.5
RELAX_BELOW = 1
"""A query with fewer hits than this (none) is followed by the next, looser one."""


def words(text: str) -> list[str]:
    """The normalised words a name query searches for (at most `MAX_WORDS`).

    Legal suffixes are dropped at both ends (a user may type `S/A SECURITIZADORA OTIMYZA`),
    unless nothing else is left."""
    found = name_tokens(text) or tokens(text)  # a name made of suffixes only: keep them
    start = 0
    while start < len(found) - 1 and found[start] in COMPANY_SUFFIXES:
        start += 1
    return found[start:][:MAX_WORDS]


def content_words(terms: list[str]) -> list[str]:
    """`terms` without the connector words (`e`, `and`, `de`, `do`...), which a name may
    write, drop or spell as `&`: they rank (the exact name, the phrase) but are not required.
    All of them when nothing else is left."""
    return [word for word in terms if word not in CONNECTORS] or terms


def _name_fields(trade_weight: float) -> tuple[tuple[str, float], ...]:
    return (("busca.razao_social", 1.0), ("busca.nome_fantasia", trade_weight))


def _sounds(terms: list[str]) -> str:
    return " ".join(phonetic(word) for word in terms)


def joined_variants(text: str) -> list[str]:
    """The query with one pair of adjacent words glued, for each pair, normalised after
    gluing (so `SERV ICOS` is tried as `servicos`, not as `servicos icos`)."""
    raw = tokens(text)[: MAX_WORDS + 1]
    found = []
    for i in range(len(raw) - 1):
        glued = " ".join(words(" ".join([*raw[:i], raw[i] + raw[i + 1], *raw[i + 2 :]])))
        if glued and glued not in found:
            found.append(glued)
    return found


def _typos(tolerant: bool) -> dict[str, Any]:
    """The options of a match that tolerates a typo per word (none when not `tolerant`)."""
    if not tolerant:
        return {}
    return {"fuzziness": TYPO_FUZZINESS, "prefix_length": PREFIX_LENGTH, "max_expansions": 20}


def _field_clauses(
    field: str, terms: list[str], glued: list[str], weight: float, tolerant: bool
) -> list[dict[str, Any]]:
    phrase = " ".join(terms)
    typos = _typos(tolerant)
    clauses: list[dict[str, Any]] = [
        {"match": {field: {"query": phrase, "operator": "and", **typos, "boost": weight}}},
        {
            "match_bool_prefix": {
                field: {"query": phrase, "operator": "and", **typos, "boost": 0.8 * weight}
            }
        },
    ]
    clauses.extend(
        {"match": {f"{field}.juntas": {"query": variant, "operator": "and", "boost": weight}}}
        for variant in [phrase, *glued]
    )
    return clauses


def _rank_clauses(field: str, terms: list[str], weight: float) -> list[dict[str, Any]]:
    phrase = " ".join(terms)
    return [
        _fixed({"term": {f"{field}.exato": phrase}}, EXACT_BOOST * weight),
        _phrase(field, phrase, PHRASE_BOOST * weight),
        {
            "match_phrase_prefix": {
                field: {"query": phrase, "max_expansions": 20, "boost": PREFIX_BOOST * weight}
            }
        },
    ]


def _phrase(field: str, phrase: str, boost: float) -> dict[str, Any]:
    """Words in the user's order: the legal name has a subfield of adjacent word pairs
    (`.frases`), so each pair of the query that the name has adds to the score; the trade name
    is matched as a phrase (one word of slop)."""
    if field == "busca.razao_social":
        return {"match": {f"{field}.frases": {"query": phrase, "boost": boost}}}
    return {"match_phrase": {field: {"query": phrase, "slop": 1, "boost": boost}}}


def name_query(
    text: str, *, trade_weight: float = 1.0, partners: bool = False, tolerant: bool = True
) -> dict[str, Any] | None:
    """Bool query matching `text` in the legal or trade name (and partner names when
    `partners`), ranked for the company the user means; None when `text` has no words.
    Not `tolerant`: the words as typed (prefix of the last, sound keys, joined pairs), without
    the typo per word, the query's main cost (see the module)."""
    terms = words(text)
    if not terms:
        return None
    glued = joined_variants(text)
    fields = _name_fields(trade_weight)
    required = content_words(terms)
    matches = [
        clause
        for name, weight in fields
        for clause in _field_clauses(name, required, glued, weight, tolerant)
    ]
    matches.append({"match": {"busca.fonetica": {"query": _sounds(required), "operator": "and"}}})
    if partners:
        matches.append(
            {
                "match": {
                    "busca.socios": {
                        "query": " ".join(terms),
                        "operator": "and",
                        **_typos(tolerant),
                        "boost": 0.5,
                    }
                }
            }
        )
    ranking = [clause for field, weight in fields for clause in _rank_clauses(field, terms, weight)]
    return {
        "bool": {
            "must": [{"bool": {"should": matches, "minimum_should_match": 1}}],
            "should": ranking,
        }
    }


def _should_match(count: int) -> str:
    """How many of `count` words a relaxed match needs: one of one or two, two of three,
    three quarters of more."""
    return "1" if count <= 2 else "2" if count == 3 else "75%"


def relaxed_query(
    text: str, *, trade_weight: float = 1.0, partners: bool = False
) -> dict[str, Any] | None:
    """The relaxed form of `name_query` (see the module): the companies that match enough of
    the words, loosely or by their sound, the exact name and the words in order ranking first
    as in `name_query`; None for no words."""
    found = words(text)
    if not found:
        return None
    terms = content_words(found)
    phrase = " ".join(terms)
    needed = _should_match(len(terms))
    fields = _name_fields(trade_weight)
    loose = [_loose(field, phrase, needed, weight) for field, weight in fields]
    sounds = _sounds(terms)
    loose.append({"match": {"busca.fonetica": {"query": sounds, "operator": "and", "boost": 2.0}}})
    loose.append(_loose("busca.fonetica", sounds, needed, 1.0))
    if partners:
        loose.append(_loose("busca.socios", phrase, needed, 0.5))
    ranking = [clause for field, weight in fields for clause in _rank_clauses(field, found, weight)]
    return {"bool": {"must": [{"bool": {"should": loose, "minimum_should_match": 1}}],
                     "should": ranking}}  # fmt: skip


def _loose(field: str, phrase: str, needed: str, boost: float) -> dict[str, Any]:
    return {
        "match": {
            field: {
                "query": phrase,
                "minimum_should_match": needed,
                "fuzziness": "AUTO",
                "prefix_length": 0,
                "max_expansions": 20,
                "boost": boost,
            }
        }
    }


def standing(situacao: str | None, matriz_filial: str | None) -> float:
    """The score a search of filters alone gives an establishment (`ranking_boosts` over a
    match of everything, 1.0): the indexer writes it as `busca.ordem`, and such a search sorts
    on it instead of scoring every match (`app.search.service.listing_for`)."""
    active = ACTIVE_BOOST if situacao == ACTIVE else 0.0
    return 1.0 + active + (MATRIZ_BOOST if matriz_filial == MATRIZ else 0.0)


ACTIVE, MATRIZ = "02", "1"
"""The codes `ranking_boosts` and `standing` favour: situação ativa, and the matriz."""


def ranking_boosts() -> list[dict[str, Any]]:
    """Active establishments, then the matriz, above otherwise equal ones."""
    return [
        _fixed({"term": {"situacao_cadastral.codigo": ACTIVE}}, ACTIVE_BOOST),
        _fixed({"term": {"matriz_filial.codigo": MATRIZ}}, MATRIZ_BOOST),
    ]


def _fixed(clause: dict[str, Any], boost: float) -> dict[str, Any]:
    return {"constant_score": {"filter": clause, "boost": boost}}
