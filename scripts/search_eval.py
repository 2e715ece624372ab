"""Relevance of the name search: a labelled query set, the release it runs on, MRR@10 and hit@1.

    python scripts/search_eval.py release OUT [--background 30000]
    python scripts/search_eval.py queries RELEASE [tests/data/search-queries.json]
    python scripts/search_eval.py two-typos RELEASE OUT
    python scripts/search_eval.py run --url http://127.0.0.1:8000 [--endpoint nome|search]

`release` writes the evaluation release: a generated month as background (generic names such as
"BOA VISTA AUTO PECAS", many alike), the real establishments of the Receita sample (real trade
names) and, for each real company row of the sample (real legal names, most of them MEIs), a
matriz and sometimes a filial. Load it with `indexer load OUT --alias search-eval`.

`queries` writes the labelled set from the real names: for each name that no other company of
the release shares, the query a user would type with accents removed or added, a typo in one
word, words reordered, the legal suffix dropped, abbreviations, two words joined or one split,
or a prefix while typing; then, for each name that allows one, a word's first letter spelled
another way (`K` for `C`, a dropped `H`, `Y` for `I`, `J` for `G`...) or `&` written `E` or
`AND` (or the other way round). Each query is labelled with the company root it means; the first hit
of that company in the top 10 gives its reciprocal rank. The file is committed, so every run
measures the same thing.

The labels use none of the app's text code (`app/domain/text.py`): a bug there would bend the
labels with the results and go unseen. The rules below are the script's own, written from what
Receita's names look like: accents are removed by Unicode NFKD, words are the runs of letters
and digits, the legal suffixes and the abbreviations are this file's own tables
(`LEGAL_SUFFIXES`, `ABBREVIATIONS`). A name is kept only when its comparison key (`name_key`:
upper case, no accents, punctuation as a separator, abbreviations written out, trailing legal
suffixes dropped) belongs to one company root of the release, and a query only when it does
not spell another company's name by the same key (nor, for reordered words, by its sorted
words; for joined or split words, by its letters without spaces; for a prefix, when the name of
one company alone starts with it).

`two-typos` writes a harder set apart from the labelled one: a long word of each name typed with
two typos, which the tolerant pass (one edit a word) leaves to the relaxed one.

`run` sends every query to the API and prints MRR@10 and hit@1, overall and per kind of query,
and the worst queries with the company that came first instead.
"""

from __future__ import annotations

import argparse
import bisect
import csv
import io
import itertools
import os
import random
import re
import shutil
import statistics
import sys
import unicodedata
import zipfile
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import msgspec

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.domain.cnpj import check_digits  # noqa: E402

SAMPLE = ROOT / "fixtures" / "sample"
QUERIES = ROOT / "tests" / "data" / "search-queries.json"
TEST_ROOTS = {f"990000{n:02d}" for n in range(1, 7)}

ABBREVIATIONS: dict[str, str] = {
    "ADMINISTRACAO": "ADM",
    "ALIMENTOS": "ALIM",
    "ASSESSORIA": "ASSESS",
    "ASSOCIACAO": "ASSOC",
    "COMERCIAL": "COML",
    "COMERCIO": "COM",
    "COMPANHIA": "CIA",
    "CONFECCOES": "CONFEC",
    "CONSTRUCOES": "CONSTR",
    "COOPERATIVA": "COOP",
    "DISTRIBUIDORA": "DISTRIB",
    "EMPREENDIMENTOS": "EMPREEND",
    "ENGENHARIA": "ENG",
    "EQUIPAMENTOS": "EQUIP",
    "EXPORTACAO": "EXP",
    "IMPORTACAO": "IMP",
    "INDUSTRIA": "IND",
    "MATERIAIS": "MAT",
    "PARTICIPACOES": "PART",
    "PRODUTOS": "PROD",
    "REPRESENTACOES": "REPR",
    "SERVICOS": "SERV",
    "TRANSPORTES": "TRANSP",
}
"""Words of company names and the abbreviation Receita's names write for them (`COM E IND`,
`IMP E EXP`, `MAT DE CONSTR`), upper case without accents; each abbreviation stands for one
word, so the table reads both ways."""
_EXPANSIONS = {short: word for word, short in ABBREVIATIONS.items()}
_WORDS_TOO = {"COM"}
"""Abbreviations that are also Portuguese words (`CAFE COM LEITE`): a query writes them out only
when a dot marks them as abbreviations (`COM.`), as the name may mean the word; comparison keys
always do, so no reading of a kept name is another company's name."""

LEGAL_SUFFIXES: frozenset[tuple[str, ...]] = frozenset(
    tuple(suffix.split())
    for suffix in (
        "LTDA", "LIMITADA", "ME", "M E", "EPP", "EIRELI", "MEI", "EI", "SLU",
        "SOCIEDADE UNIPESSOAL", "SA", "S A", "SOCIEDADE ANONIMA", "SS", "S S", "SC", "S C",
        "SOCIEDADE INDIVIDUAL DE ADVOCACIA",
    )
)  # fmt: skip
"""Brazilian legal forms written after a company's name (limitada, micro and small company,
individual company, sociedade unipessoal, sociedade anônima, sociedade simples and civil,
a lawyer's sole-member firm), as words (`S/A` and `S.A.` are the words `S A`). They say what
kind of company it is, not which one."""
_LONGEST_SUFFIX = max(len(suffix) for suffix in LEGAL_SUFFIXES)
_WORD = re.compile(r"[^\W_]+")
_ACCENTS = {"A": "Á", "E": "Ê", "O": "Ó", "C": "Ç", "I": "Í", "U": "Ú"}
_KEY_KINDS = {"reordered": "sorted", "joined": "spaceless", "split": "spaceless"}


def strip_accents(text: str) -> str:
    """`text` without accents or cedillas (Unicode NFKD, combining marks dropped)."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(char for char in decomposed if not unicodedata.combining(char))


def words_of(text: str) -> list[str]:
    """Upper-case words of `text` without accents; anything but a letter or digit separates."""
    return _WORD.findall(strip_accents(text).upper())


def _suffix_length(words: list[str]) -> int:
    """How many of the last `words` spell a legal suffix (the longest one), or 0."""
    for size in range(min(_LONGEST_SUFFIX, len(words)), 0, -1):
        if tuple(words[-size:]) in LEGAL_SUFFIXES:
            return size
    return 0


def name_key(text: str) -> str:
    """What tells two names apart for a user: words of `text` with abbreviations written out and
    trailing legal suffixes dropped (a name made of suffixes only keeps them)."""
    words = [_EXPANSIONS.get(word, word) for word in words_of(text)]
    while (size := _suffix_length(words)) and size < len(words):
        del words[-size:]
    return " ".join(words)


def _keys(text: str) -> dict[str, str]:
    """The comparison keys of `text`: by words, by sorted words, by letters without spaces."""
    key = name_key(text)
    return {"key": key, "sorted": " ".join(sorted(key.split())), "spaceless": key.replace(" ", "")}


class Query(msgspec.Struct, frozen=True):
    query: str
    cnpj_basico: str
    kind: str
    name: str


def _read(path: Path) -> list[list[str]]:
    with path.open(encoding="latin-1", newline="") as stream:
        return [row for row in csv.reader(stream, delimiter=";") if row]


def real_names() -> list[tuple[str, str]]:
    """(root, name) of the sample's real legal names and real trade names."""
    names = [(row[0], row[1]) for row in _read(SAMPLE / "EMPRECSV.csv")]
    names += [(row[0], row[4]) for row in _read(SAMPLE / "ESTABELE.csv")]
    return [(root, name.strip()) for root, name in names if row_ok(root, name)]


def row_ok(root: str, name: str) -> bool:
    return root not in TEST_ROOTS and bool(words_of(name))


def _write_zip(path: Path, member: str, rows: list[list[str]]) -> None:
    text = io.StringIO()
    csv.writer(text, delimiter=";", quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(member, text.getvalue().encode("latin-1", "replace"))


def build_release(out: Path, background: int, seed: int = 11) -> None:
    """The evaluation release in `out` (see the module docstring)."""
    from scripts.generate_month import generate

    if out.exists():
        shutil.rmtree(out)
    generate(out, background, seed, parts=1)
    shutil.copy(SAMPLE / "ESTABELE.csv", out / "Sample.ESTABELE.csv")
    rng = random.Random(seed)
    companies = [row for row in _read(SAMPLE / "EMPRECSV.csv") if row[0] not in TEST_ROOTS]
    sample_roots = {row[0] for row in _read(SAMPLE / "ESTABELE.csv")}
    establishments = []
    for row in companies:
        if row[0] in sample_roots:
            continue
        for order in range(1, 3 if rng.random() < 0.2 else 2):
            body = f"{row[0]}{order:04d}"
            situacao = "02" if rng.random() < 0.7 else "08"
            establishments.append(
                [row[0], f"{order:04d}", check_digits(body)[:2], "1" if order == 1 else "2", "",
                 situacao, "20200101", "00", "", "", "20150301", "4781400", "", "RUA",
                 "DAS FLORES", "10", "", "CENTRO", "01001000", "SP", "7107", "11", "33334444",
                 "", "", "", "", "", "", ""]
            )  # fmt: skip
    _write_zip(out / "Eval.zip", "EVAL.D61108.ESTABELE", establishments)
    _write_zip(out / "EvalEmpresas.zip", "EVAL.D61108.EMPRECSV", companies)


def _typo(word: str, rng: random.Random) -> str:
    """One letter swapped with the next, dropped or replaced, never the first one."""
    i = rng.randrange(1, len(word) - 1)
    kind = rng.choice(("swap", "drop", "replace"))
    if kind == "swap":
        return word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    if kind == "drop":
        return word[:i] + word[i + 1 :]
    letter = rng.choice([c for c in "AEIOURSTNLCM" if c != word[i]])
    return word[:i] + letter + word[i + 1 :]


def _without_suffix(typed: list[str]) -> list[str]:
    """Typed words (punctuation kept: `S/A`, `LTDA.`) without the trailing legal suffixes and
    the words without letters or digits between them (`,`); at least one word is left."""
    kept = list(typed)
    while len(kept) > 1:
        for size in range(min(_LONGEST_SUFFIX, len(kept) - 1), 0, -1):
            tail = words_of(" ".join(kept[-size:]))
            if not tail or tuple(tail) in LEGAL_SUFFIXES:
                del kept[-size:]
                break
        else:
            break
    return kept


def _abbreviate(words: list[str], table: dict[str, str]) -> list[str]:
    """`words` looked up in `table` (a trailing dot ignored), but for a bare word of `_WORDS_TOO`
    (`COM` is kept, `COM.` is written out)."""
    return [word if word in _WORDS_TOO else table.get(word.rstrip("."), word) for word in words]


def variants(name: str, rng: random.Random) -> dict[str, str]:
    """The ways a user would type `name`, by kind; only the kinds that change the name."""
    plain = strip_accents(name).upper().replace("-", " ").split()  # `MODAS-ME`: two words
    found: dict[str, str] = {"exact": name}
    found["accents_removed"] = strip_accents(name).lower()
    accented = [
        "".join(_ACCENTS.get(c, c) if i == 1 else c for i, c in enumerate(word)) for word in plain
    ]
    found["accents_added"] = " ".join(accented).lower()
    long_words = [i for i, word in enumerate(plain) if len(word) >= 5 and word.isalpha()]
    if long_words:
        typed = list(plain)
        i = rng.choice(long_words)
        typed[i] = _typo(typed[i], rng)
        found["typo"] = " ".join(typed)
    stripped = _without_suffix(plain)
    core = [word for word in stripped if words_of(word) or word == "&"]
    if len(core) >= 2:
        reordered = list(core)
        reordered[0], reordered[-1] = reordered[-1], reordered[0]
        found["reordered"] = " ".join(reordered)
    if len(words_of(" ".join(stripped))) < len(words_of(name)):
        found["suffix_dropped"] = " ".join(core)
    abbreviated = _abbreviate(plain, ABBREVIATIONS)
    expanded = _abbreviate(plain, _EXPANSIONS)
    if abbreviated != plain:
        found["abbreviated"] = " ".join(abbreviated)
    elif expanded != plain:
        found["abbreviated"] = " ".join(expanded)
    joinable = [i for i in range(len(core) - 1) if len(core[i]) + len(core[i + 1]) <= 12]
    if joinable:
        i = rng.choice(joinable)
        found["joined"] = " ".join([*core[:i], core[i] + core[i + 1], *core[i + 2 :]])
    splittable = [i for i, word in enumerate(core) if len(word) >= 8 and word.isalpha()]
    if splittable:
        i = rng.choice(splittable)
        cut = len(core[i]) // 2
        found["split"] = " ".join([*core[:i], core[i][:cut], core[i][cut:], *core[i + 1 :]])
    for last in range(1, len(core)):
        if len(core[last]) >= 4:
            found["prefix"] = " ".join([*core[:last], core[last][:3]]).lower()
            break
    return {kind: text for kind, text in found.items() if kind == "exact" or text != name}


_FIRST_LETTERS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), replacement)
    for pattern, replacement in (
        (r"^C(?=[AOURL])", "K"),
        (r"^K", "C"),
        (r"^Y", "I"),
        (r"^I(?=[^AEIOU])", "Y"),
        (r"^H(?=[AEIOU])", ""),
        (r"^G(?=[EI])", "J"),
        (r"^J(?=[EI])", "G"),
        (r"^W", "V"),
        (r"^V", "W"),
        (r"^PH", "F"),
        (r"^Z", "S"),
    )
)
"""How the first letter of a Brazilian name varies as people write it: `CAROLINE`/`KAROLINE`,
`YARA`/`IARA`, `HELENA`/`ELENA`, `GEOVANA`/`JEOVANA`, `WAGNER`/`VAGNER`, `PHELIPE`/`FELIPE`,
`ZILDA`/`SILDA` (this file's own table, from how names are spelled, not the app's)."""


def spelling_variants(name: str, rng: random.Random) -> dict[str, str]:
    """The ways of typing `name` that the first pass of the search cannot meet: one word's
    first letter spelled another way (`first_letter`), and `&` written `E` or `AND` or the
    other way round (`connector`); only the kinds that apply to the name."""
    plain = strip_accents(name).upper().replace("-", " ").split()
    found: dict[str, str] = {}
    spellable = [
        (i, pattern, replacement)
        for i, word in enumerate(plain)
        if len(word) >= 4 and word.isalpha()
        for pattern, replacement in _FIRST_LETTERS
        if pattern.search(word)
    ]
    if spellable:
        i, pattern, replacement = rng.choice(spellable)
        typed = list(plain)
        typed[i] = pattern.sub(replacement, typed[i], count=1)
        found["first_letter"] = " ".join(typed)
    if "&" in plain:
        found["connector"] = " ".join(rng.choice(("E", "AND")) if w == "&" else w for w in plain)
    elif "E" in plain[1:-1]:
        found["connector"] = " ".join("&" if w == "E" else w for w in plain)
    return found


def _sources(release: Path) -> Iterator[tuple[str, io.TextIOBase]]:
    """(file or member name, text stream) of every CSV of `release`, zips opened."""
    for path in sorted(p for p in release.rglob("*") if p.is_file()):
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                for member in archive.namelist():
                    with archive.open(member) as raw:
                        yield member, io.TextIOWrapper(raw, encoding="latin-1", newline="")
        else:
            with path.open(encoding="latin-1", newline="") as stream:
                yield path.name, stream


def release_names(release: Path) -> list[tuple[str, str]]:
    """(root, legal or trade name) of every company and establishment in `release`, read from
    its CSVs as Receita lays them out (legal name in column 2 of EMPRECSV files, trade name in
    column 5 of ESTABELE files)."""
    found = []
    for name, stream in _sources(release):
        kind = name.upper()
        column = 1 if "EMPRECSV" in kind else 4 if "ESTABELE" in kind else None
        if column is None:
            continue
        for row in csv.reader(stream, delimiter=";"):
            if len(row) > column and row[column].strip():
                found.append((row[0], row[column].strip()))
    return found


class _Labels:
    """Which company roots each comparison key (and each name's beginning) belongs to."""

    def __init__(self, names: list[tuple[str, str]]) -> None:
        self.roots: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
        starts = set()
        for root, name in names:
            for form, key in _keys(name).items():
                self.roots[form][key].add(root)
            starts.add((" ".join(words_of(name)), root))
        self.starts = sorted(starts)

    def unique(self, root: str, name: str) -> bool:
        """Whether no other company's name has the key of `name`."""
        return self.roots["key"][name_key(name)] == {root}

    def unambiguous(self, root: str, kind: str, query: str) -> bool:
        """Whether `query` means company `root` alone: it spells no other company's name."""
        if kind == "prefix":
            typed = " ".join(words_of(query))
            first = bisect.bisect_left(self.starts, (typed,))
            owners = set()
            for start, owner in itertools.islice(self.starts, first, None):
                if not start.startswith(typed):
                    break
                owners.add(owner)
            return owners == {root}
        keys = _keys(query)
        forms = ["key", *([_KEY_KINDS[kind]] if kind in _KEY_KINDS else [])]
        return all(self.roots[form].get(keys[form], {root}) == {root} for form in forms)


def _unique_names(release: Path) -> tuple[_Labels, list[tuple[str, str]]]:
    """The labels of `release` and its real names (root, name) that no other company shares."""
    labels = _Labels(release_names(release))
    unique = sorted({(root, name) for root, name in real_names() if labels.unique(root, name)})
    return labels, unique


def make_queries(release: Path, per_name: int = 2, seed: int = 5) -> list[Query]:
    """Labelled queries for the real names that are unique in `release` (see the docstring)."""
    rng = random.Random(seed)
    labels, unique = _unique_names(release)
    queries: list[Query] = []
    for root, name in unique:
        options = {
            kind: text
            for kind, text in variants(name, rng).items()
            if labels.unambiguous(root, kind, text)
        }
        kinds = sorted(options)
        for kind in rng.sample(kinds, min(per_name, len(kinds))):
            queries.append(Query(options[kind], root, kind, name))
    # The spelling kinds come from a random stream of their own, after the others, so adding
    # them left every earlier query of the file as it was.
    spelling = random.Random(seed + 1)
    for root, name in unique:
        options = {
            kind: text
            for kind, text in spelling_variants(name, spelling).items()
            if labels.unambiguous(root, kind, text)
        }
        if options:
            kind = spelling.choice(sorted(options))
            queries.append(Query(options[kind], root, kind, name))
    return queries


def two_typo_queries(release: Path, seed: int = 9) -> list[Query]:
    """A harder set, kept apart from the labelled one: for each real name unique in `release`
    with a word of 8 letters or more, that word typed with two typos (`two_typos`), when the
    result spells no other company's name."""
    rng = random.Random(seed)
    labels, unique = _unique_names(release)
    queries: list[Query] = []
    for root, name in unique:
        typed = name.split()
        long = [i for i, word in enumerate(typed) if len(word) >= 8 and word.isalpha()]
        if not long:
            continue
        i = rng.choice(long)
        typed[i] = _typo(_typo(typed[i], rng), rng)
        text = " ".join(typed)
        if text != name and labels.unambiguous(root, "typo", text):
            queries.append(Query(text, root, "two_typos", name))
    return queries


def evaluate(
    url: str,
    queries: list[Query],
    endpoint: str = "nome",
    api_key: str | None = None,
    worst: int = 12,
) -> dict[str, Any]:
    """MRR@10 and hit@1 of `queries` against the API at `url`, with the Bearer `api_key`: overall,
    per kind of query, and the `worst` queries with the name that came first instead."""
    param = "nome" if endpoint in ("nome", "seek") else "q"
    ranks: list[tuple[Query, int | None, str]] = []
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    with httpx.Client(base_url=url, timeout=30, headers=headers) as client:
        for item in queries:
            response = client.get(f"/v1/{endpoint}", params={param: item.query, "limit": 10})
            response.raise_for_status()
            hits = response.json()["data"]
            roots = [hit["cnpj"][:8] for hit in hits]
            rank = roots.index(item.cnpj_basico) + 1 if item.cnpj_basico in roots else None
            first = (
                f"{hits[0]['cnpj']} {hits[0]['razao_social']} / {hits[0]['nome_fantasia']}"
                if hits
                else ""
            )
            ranks.append((item, rank, first))
    by_kind: dict[str, list[int | None]] = defaultdict(list)
    for item, rank, _ in ranks:
        by_kind[item.kind].append(rank)
    ordered = sorted(ranks, key=lambda found: (found[1] or 99, found[0].query), reverse=True)
    return {
        **_scores([rank for _, rank, _ in ranks]),
        "by_kind": {kind: _scores(found) for kind, found in sorted(by_kind.items())},
        "worst": [
            {**msgspec.structs.asdict(item), "rank": rank, "first": first}
            for item, rank, first in ordered[:worst]
            if rank != 1
        ],
    }


def _scores(ranks: list[int | None]) -> dict[str, Any]:
    return {
        "queries": len(ranks),
        "mrr_at_10": round(statistics.fmean(1 / rank if rank else 0.0 for rank in ranks), 4),
        "hit_at_1": round(sum(1 for rank in ranks if rank == 1) / len(ranks), 4),
    }


def load_queries(path: Path = QUERIES) -> list[Query]:
    return msgspec.json.decode(path.read_bytes(), type=list[Query])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    release = commands.add_parser("release")
    release.add_argument("out", type=Path)
    release.add_argument("--background", type=int, default=30_000)
    queries = commands.add_parser("queries")
    queries.add_argument("release", type=Path, help="the evaluation release")
    queries.add_argument("out", type=Path, nargs="?", default=QUERIES)
    hard = commands.add_parser("two-typos")
    hard.add_argument("release", type=Path, help="the evaluation release")
    hard.add_argument("out", type=Path)
    run = commands.add_parser("run")
    run.add_argument("--url", default="http://127.0.0.1:8000")
    run.add_argument("--endpoint", default="nome", choices=("nome", "search", "seek"))
    run.add_argument("--queries", type=Path, default=QUERIES)
    run.add_argument("--worst", type=int, default=12, help="how many worst queries to print")
    run.add_argument(
        "--api-key",
        default=os.environ.get("API_KEY"),
        help="default: $API_KEY, else a new key of the bench plan",
    )
    args = parser.parse_args()
    if args.command == "release":
        build_release(args.out, args.background)
        print(f"evaluation release written to {args.out}")
    elif args.command in ("queries", "two-typos"):
        make = make_queries if args.command == "queries" else two_typo_queries
        made = make(args.release)
        args.out.write_bytes(msgspec.json.format(msgspec.json.encode(made), indent=1) + b"\n")
        print(f"{len(made)} labelled queries written to {args.out}")
    else:
        from scripts.loadgen import bench_key

        key = args.api_key or bench_key()
        result = evaluate(args.url, load_queries(args.queries), args.endpoint, key, args.worst)
        print(f"queries {result['queries']}  endpoint /v1/{args.endpoint}")
        print(f"MRR@10 {result['mrr_at_10']:.4f}  hit@1 {result['hit_at_1']:.4f}")
        for kind, value in result["by_kind"].items():
            print(
                f"  {kind:16} {value['queries']:5} queries  MRR@10 {value['mrr_at_10']:.4f}"
                f"  hit@1 {value['hit_at_1']:.4f}"
            )
        print("worst queries:")
        for item in result["worst"]:
            print(
                f"  rank {item['rank']}  [{item['kind']}] {item['query']!r} -> {item['name']!r}"
                f" ({item['cnpj_basico']}); first: {item['first']!r}"
            )


if __name__ == "__main__":
    main()
