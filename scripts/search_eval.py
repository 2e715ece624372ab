"""Relevance of the name search: a labelled query set, the release it runs on, MRR@10 and hit@1.

    python scripts/search_eval.py release OUT [--background 30000]
    python scripts/search_eval.py queries RELEASE [tests/data/search-queries.json]
    python scripts/search_eval.py run --url http://127.0.0.1:8000 [--endpoint nome|search]

`release` writes the evaluation release: a generated month as background (generic names such as
"BOA VISTA AUTO PECAS", many alike), the real establishments of the Receita sample (real trade
names) and, for each real company row of the sample (real legal names, most of them MEIs), a
matriz and sometimes a filial. Load it with `indexer load OUT --alias search-eval`.

`queries` writes the labelled set from the real names: for each name that is unique once
normalised, the query a user would type with accents removed or added, a typo in one word,
words reordered, the legal suffix dropped, abbreviations, two words joined or one split, or a
prefix while typing. Each query is labelled with the company root it means; the first hit of
that company in the top 10 gives its reciprocal rank. The file is committed, so every run
measures the same thing.

`run` sends every query to the API and prints MRR@10, hit@1, the figures per kind of query and
the worst queries.
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import random
import shutil
import statistics
import sys
import zipfile
from collections import defaultdict
from pathlib import Path
from typing import Any

import httpx
import msgspec

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from app.domain.cnpj import check_digits  # noqa: E402
from app.domain.text import ABBREVIATIONS, COMPANY_SUFFIXES, fold, normalize_name  # noqa: E402

SAMPLE = ROOT / "fixtures" / "sample"
QUERIES = ROOT / "tests" / "data" / "search-queries.json"
TEST_ROOTS = {f"990000{n:02d}" for n in range(1, 7)}
_EXPANSIONS = {
    "COMERCIO": "COM",
    "INDUSTRIA": "IND",
    "COMPANHIA": "CIA",
    "DISTRIBUIDORA": "DISTRIB",
    "PARTICIPACOES": "PART",
    "EMPREENDIMENTOS": "EMP",
    "SERVICOS": "SERV",
    "TRANSPORTES": "TRANSP",
}
_ACCENTS = {"A": "Á", "E": "Ê", "O": "Ó", "C": "Ç", "I": "Í", "U": "Ú"}


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
    names = [(row[0], row[1]) for row in _read(SAMPLE / "EMPRECSV.csv") if row[0] not in TEST_ROOTS]
    names += [(row[0], row[4]) for row in _read(SAMPLE / "ESTABELE.csv") if row[4].strip()]
    return [(root, name.strip()) for root, name in names if row_ok(root, name)]


def row_ok(root: str, name: str) -> bool:
    return root not in TEST_ROOTS and len(normalize_name(name).split()) >= 1


def _write_zip(path: Path, member: str, rows: list[list[str]]) -> None:
    text = io.StringIO()
    csv.writer(text, delimiter=";", quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(member, text.getvalue().encode("latin-1", "replace"))


def build_release(out: Path, background: int, seed: int = 11) -> None:
    """The evaluation release in `out` (see the module docstring)."""
    from generate_month import generate

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
    i = rng.randrange(1, len(word) - 1)
    kind = rng.choice(("swap", "drop", "replace"))
    if kind == "swap":
        return word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    if kind == "drop":
        return word[:i] + word[i + 1 :]
    letter = rng.choice([c for c in "AEIOURSTNLCM" if c != word[i]])
    return word[:i] + letter + word[i + 1 :]


def variants(name: str, rng: random.Random) -> dict[str, str]:
    """The ways a user would type `name`, by kind; only the kinds that change the name."""
    words = name.upper().split()
    found: dict[str, str] = {"exact": name}
    found["accents_removed"] = fold(name)
    plain = [fold(word).upper() for word in words]
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
    core = [word for word in plain if fold(word) not in COMPANY_SUFFIXES]
    if len(core) >= 2:
        reordered = list(core)
        reordered[0], reordered[-1] = reordered[-1], reordered[0]
        found["reordered"] = " ".join(reordered)
    if len(core) < len(plain) and core:
        found["suffix_dropped"] = " ".join(core)
    abbreviated = [_EXPANSIONS.get(word, word) for word in plain]
    expanded = [ABBREVIATIONS.get(word.lower(), word.lower()).upper() for word in plain]
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
    for typed in range(1, len(core)):
        if len(core[typed]) >= 4:
            found["prefix"] = " ".join([*core[:typed], core[typed][:3]]).lower()
            break
    return {kind: text for kind, text in found.items() if kind == "exact" or text != name}


def _unique_prefix(typed: str, names: list[str]) -> bool:
    """Whether exactly one name starts with the words of `typed` (its last one a prefix)."""
    return sum(1 for name in names if name.startswith(typed)) == 1


def release_names(release: Path) -> list[tuple[str, str]]:
    """(root, legal or trade name) of every company and establishment in `release`."""
    from indexer.reader import Row, read_rows
    from indexer.sources import Kind, scan

    column = {Kind.EMPRESAS: 1, Kind.ESTABELECIMENTOS: 4}
    found = []
    for item in scan(release)[0]:
        if item.kind in column:
            with item.source.open() as stream:
                for row in read_rows(stream, item.source.name, item.kind):
                    if isinstance(row, Row) and row.fields[column[item.kind]].strip():
                        found.append((row.fields[0], row.fields[column[item.kind]].strip()))
    return found


def make_queries(release: Path, per_name: int = 2, seed: int = 5) -> list[Query]:
    """Labelled queries for the real names; names and prefixes must be unique in `release`."""
    rng = random.Random(seed)
    names = real_names()
    everything = release_names(release)
    counts: dict[str, set[str]] = defaultdict(set)
    for root, name in everything:
        counts[normalize_name(name)].add(root)
    unique = sorted(
        {(root, name) for root, name in names if counts[normalize_name(name)] == {root}}
    )
    normalised = sorted({normalize_name(name) for _, name in everything})
    queries: list[Query] = []
    for root, name in unique:
        options = variants(name, rng)
        typed = options.get("prefix")
        if typed is not None and not _unique_prefix(normalize_name(typed), normalised):
            del options["prefix"]
        kinds = sorted(options)
        for kind in rng.sample(kinds, min(per_name, len(kinds))):
            queries.append(Query(options[kind], root, kind, name))
    return queries


def evaluate(
    url: str, queries: list[Query], endpoint: str = "nome", api_key: str | None = None
) -> dict[str, Any]:
    """MRR@10 and hit@1 of `queries` against the API at `url`, with the Bearer `api_key`."""
    param = "nome" if endpoint in ("nome", "seek") else "q"
    ranks: list[tuple[Query, int | None]] = []
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    with httpx.Client(base_url=url, timeout=30, headers=headers) as client:
        for item in queries:
            response = client.get(f"/v1/{endpoint}", params={param: item.query, "limit": 10})
            response.raise_for_status()
            roots = [hit["cnpj"][:8] for hit in response.json()["data"]]
            rank = roots.index(item.cnpj_basico) + 1 if item.cnpj_basico in roots else None
            ranks.append((item, rank))
    by_kind: dict[str, list[float]] = defaultdict(list)
    for item, rank in ranks:
        by_kind[item.kind].append(1 / rank if rank else 0.0)
    reciprocal = [1 / rank if rank else 0.0 for _, rank in ranks]
    worst = sorted(ranks, key=lambda pair: (pair[1] or 99, pair[0].query), reverse=True)
    return {
        "queries": len(ranks),
        "mrr_at_10": statistics.fmean(reciprocal),
        "hit_at_1": sum(1 for _, rank in ranks if rank == 1) / len(ranks),
        "by_kind": {kind: round(statistics.fmean(v), 4) for kind, v in sorted(by_kind.items())},
        "worst": [
            {"query": item.query, "kind": item.kind, "name": item.name, "rank": rank}
            for item, rank in worst[:12]
            if rank != 1
        ],
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
    run = commands.add_parser("run")
    run.add_argument("--url", default="http://127.0.0.1:8000")
    run.add_argument("--endpoint", default="nome", choices=("nome", "search", "seek"))
    run.add_argument("--queries", type=Path, default=QUERIES)
    run.add_argument(
        "--api-key",
        default=os.environ.get("API_KEY"),
        help="default: $API_KEY, else a new key of the bench plan",
    )
    args = parser.parse_args()
    if args.command == "release":
        build_release(args.out, args.background)
        print(f"evaluation release written to {args.out}")
    elif args.command == "queries":
        made = make_queries(args.release)
        args.out.write_bytes(msgspec.json.format(msgspec.json.encode(made), indent=1) + b"\n")
        print(f"{len(made)} labelled queries written to {args.out}")
    else:
        from loadgen import bench_key

        key = args.api_key or bench_key()
        result = evaluate(args.url, load_queries(args.queries), args.endpoint, key)
        print(f"queries {result['queries']}  endpoint /v1/{args.endpoint}")
        print(f"MRR@10 {result['mrr_at_10']:.4f}  hit@1 {result['hit_at_1']:.4f}")
        for kind, value in result["by_kind"].items():
            print(f"  {kind:16} MRR@10 {value:.4f}")
        print("worst queries:")
        for item in result["worst"]:
            print(f"  rank {item['rank']}  [{item['kind']}] {item['query']!r} -> {item['name']!r}")


if __name__ == "__main__":
    main()
