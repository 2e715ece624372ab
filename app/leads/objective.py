"""A commercial objective in plain words, read as lead filters: the segments it targets, the
states it names and the company size it implies.

"Vendo software de contabilidade para pequenos restaurantes no Paraná" reads as: segment
`restaurantes` (what follows the last "para" is who buys), UF `PR`, porte micro and small.
Rules, in order (all deterministic, no model):
1. Segments named after the last "para" (or "pra") are the target.
2. Otherwise, what is sold (an objective of the vocabulary) gives the segments that buy it.
3. Otherwise, any segment named anywhere.
4. Otherwise nothing: the caller falls back to the CNAE catalog with the words left over.
States: a state's name after "no", "na", "em", "do", "da" or "de" ("no Paraná"), or its
abbreviation written in capitals ("PR"). Size: "pequeno(s)/pequena(s)" -> ME and EPP,
"micro..." -> ME, "médio(s)/grande(s)" -> Demais.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import msgspec

from app.domain import codes
from app.domain.text import tokens
from app.leads.vocabulary import stem, vocabulary

LOCATIVES = frozenset({"no", "na", "em", "do", "da", "de", "nos", "nas", "dos", "das"})
STOPWORDS = frozenset(
    """a o as os um uma uns umas de da do das dos e em no na nos nas para pra por com sem que
    eu nos meu minha meus minhas seu sua vendo vender venda vendas quero queremos ofereco
    oferecer oferecemos ofertar prestar presto prestamos atender atendo atendemos prospectar
    encontrar achar clientes cliente empresa empresas negocio negocios lead leads b2b setor
    segmento area regiao todo toda todos todas brasil""".split()
)
# Raw folded tokens, as `_states` compares them: stemmed keys never matched "Goiás" ("goia"),
# "Minas Gerais", "Alagoas", "Amazonas" or "Tocantins".
_STATES = {tuple(tokens(name)): uf for uf, name in codes.UF_NOMES.items()}
_LONGEST_STATE = max(len(k) for k in _STATES)
_SIGLA = re.compile(r"\b[A-Z]{2}\b")


class Leitura(msgspec.Struct, kw_only=True):
    """What an objective says, in filters."""

    segmentos: list[str]
    """Segment slugs of the vocabulary, in the order the objective names them."""
    regra: str | None
    """Which rule found them: `publico` (after "para"), `objetivo` (what is sold),
    `mencao` (named anywhere), None (none found)."""
    ufs: list[str]
    portes: list[str]
    resto: str
    """The words no rule used (without stopwords): what the CNAE catalog is asked about when
    no segment was found."""


def _scan(
    words: list[str], table: dict[tuple[str, ...], str] | dict[tuple[str, ...], int], longest: int
) -> list[tuple[int, int, str | int]]:
    """Greedy longest matches of `table`'s keys in `words`: (start, end, value)."""
    found: list[tuple[int, int, str | int]] = []
    start = 0
    while start < len(words):
        for size in range(min(longest, len(words) - start), 0, -1):
            value = table.get(tuple(words[start : start + size]))
            if value is not None:
                found.append((start, start + size, value))
                start += size
                break
        else:
            start += 1
    return found


def _unique(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))


def _states(raw: str, words: list[str]) -> tuple[list[str], set[int]]:
    """UFs named in the text and the positions of the words that named them."""
    found: list[str] = []
    used: set[int] = set()
    for start in range(1, len(words)):
        if words[start - 1] not in LOCATIVES:
            continue
        for size in range(min(_LONGEST_STATE, len(words) - start), 0, -1):
            uf = _STATES.get(tuple(words[start : start + size]))
            if uf is not None:
                found.append(uf)
                used.update(range(start - 1, start + size))
                break
    siglas = [sigla for sigla in _SIGLA.findall(raw) if sigla in codes.UF_NOMES]
    found.extend(siglas)
    lowered = {sigla.lower() for sigla in siglas}
    used.update(i for i, word in enumerate(words) if word in lowered)
    return _unique(found), used


_MEDIUM_LARGE = frozenset({"medio", "media", "medios", "medias", "grande", "grandes"})


def _porte(word: str) -> list[str]:
    """The portes a size word implies; whole words, so that "medicamentos", "médicos" or
    "microfones" imply none."""
    if word.startswith("pequen"):
        return ["01", "03"]
    if word in ("micro", "micros") or word.startswith("microempre"):
        return ["01"]
    if word in _MEDIUM_LARGE:
        return ["05"]
    return []


_SIZED = frozenset({
    "porte", "portes", "empresa", "empresas", "negocio", "negocios", "companhia", "companhias",
    "industria", "industrias", "rede", "redes", "grupo", "grupos", "cliente", "clientes",
})  # fmt: skip
"""Words a medium or large size word must qualify to be a size: "grandes indústrias", "médio
porte", "porte grande"; not "Campo Grande", "ensino médio" or "Rio Grande do Norte"."""


def _sized(words: list[str], index: int) -> bool:
    """Whether the medium or large word at `index` speaks of size: a sized word right after or
    before it, or a size word that does after "e"/"ou" ("médias e grandes empresas")."""
    after = words[index + 1] if index + 1 < len(words) else ""
    if after in _SIZED or (index > 0 and words[index - 1] in ("porte", "portes")):
        return True
    chained = index + 2 < len(words) and after in ("e", "ou")
    return chained and _porte(words[index + 2]) != [] and _sized(words, index + 2)


def _speaks_of_size(words: list[str], index: int) -> bool:
    """Whether the word at `index` is a size word used as one (a medium or large word only
    where it qualifies a sized word: "Campo Grande" is a place)."""
    word = words[index]
    return bool(_porte(word)) and (word not in _MEDIUM_LARGE or _sized(words, index))


def _portes(words: list[str], used: set[int]) -> list[str]:
    """The portes the size words imply, leaving out the words of a state's name."""
    found: set[str] = set()
    for index, word in enumerate(words):
        if index not in used and _speaks_of_size(words, index):
            found.update(_porte(word))
    return sorted(found)


def read(objetivo: str) -> Leitura:
    """The filters an objective implies (see the module's rules)."""
    raw_words = tokens(objetivo)
    words = [stem(word) for word in raw_words]
    ufs, used = _states(objetivo, raw_words)
    free = [word if index not in used else "" for index, word in enumerate(words)]
    target = [i for i, w in enumerate(raw_words) if w in ("para", "pra") and i not in used]
    cut = target[-1] + 1 if target else 0
    vocab = vocabulary()
    segments: list[str] = []
    rule: str | None = None
    consumed: set[int] = set()
    if cut:
        matches = _scan(free[cut:], vocab.termos_segmento, vocab.maior_termo)
        segments = [str(value) for _, _, value in matches]
        consumed = {cut + i for s, e, _ in matches for i in range(s, e)}
        rule = "publico" if segments else None
    if not segments:
        matches = _scan(free, vocab.termos_objetivo, vocab.maior_termo)
        segments = [s for _, _, index in matches for s in vocab.objetivos[int(index)].segmentos]
        consumed = {i for s, e, _ in matches for i in range(s, e)}
        rule = "objetivo" if segments else None
    if not segments:
        matches = _scan(free, vocab.termos_segmento, vocab.maior_termo)
        segments = [str(value) for _, _, value in matches]
        consumed = {i for s, e, _ in matches for i in range(s, e)}
        rule = "mencao" if segments else None
    rest = [
        raw_words[i]
        for i, word in enumerate(free)
        if word and i not in consumed and raw_words[i] not in STOPWORDS
        and not _speaks_of_size(raw_words, i)
    ]  # fmt: skip
    return Leitura(
        segmentos=_unique(segments),
        regra=rule,
        ufs=ufs,
        portes=_portes(raw_words, used),
        resto=" ".join(rest),
    )
