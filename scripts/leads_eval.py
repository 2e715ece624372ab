"""How well a commercial objective is read as lead filters: a labelled set of objectives, each
with the CNAE codes and UFs it means, against `app.leads.objective.read` and the vocabulary.

    .venv/bin/python scripts/leads_eval.py [--set tests/leads/objetivos-rotulados.json] [--show-misses]

Each objective is read; its segments are expanded to their CNAE codes (`vocabulary()`). An
expected code is reached when a reached code equals it or is a prefix of it (a class reaches its
subclasses). Printed: hit rate (every expected code reached), partial hit rate (at least one),
code recall (expected codes reached over all expected codes), UF accuracy (the UFs read equal
the labelled ones, as sets), the share of objectives where no segment was found, and the mean
number of codes reached. No service is needed: it reads files only.
"""  # noqa: E501 (the usage line)

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.leads.objective import read  # noqa: E402
from app.leads.vocabulary import vocabulary  # noqa: E402

DEFAULT_SET = ROOT / "tests" / "leads" / "objetivos-rotulados.json"


@dataclass(frozen=True)
class Outcome:
    """One labelled objective, read."""

    objetivo: str
    expected: list[str]
    reached: list[str]
    missing: list[str]
    segmentos: list[str]
    regra: str | None
    ufs: list[str]
    expected_ufs: list[str]

    @property
    def hit(self) -> bool:
        return not self.missing

    @property
    def partial(self) -> bool:
        return len(self.missing) < len(self.expected)

    @property
    def uf_ok(self) -> bool:
        return set(self.ufs) == set(self.expected_ufs)


def reached_codes(segmentos: list[str]) -> list[str]:
    """The CNAE codes (prefixes) of some segments, without repeats, in order."""
    vocab = vocabulary()
    codes = [code for slug in segmentos for code in vocab.segmentos[slug].cnaes]
    return list(dict.fromkeys(codes))


def is_reached(expected: str, reached: list[str]) -> bool:
    return any(expected.startswith(code) for code in reached)


def outcomes(path: Path) -> list[Outcome]:
    labelled = json.loads(path.read_text(encoding="utf-8"))
    found: list[Outcome] = []
    for item in labelled:
        leitura = read(item["objetivo"])
        reached = reached_codes(leitura.segmentos)
        expected = list(item["cnaes"])
        found.append(
            Outcome(
                objetivo=item["objetivo"],
                expected=expected,
                reached=reached,
                missing=[code for code in expected if not is_reached(code, reached)],
                segmentos=leitura.segmentos,
                regra=leitura.regra,
                ufs=leitura.ufs,
                expected_ufs=list(item.get("ufs", [])),
            )
        )
    return found


def _metrics(found: list[Outcome]) -> dict[str, float]:
    total = len(found) or 1
    expected = sum(len(o.expected) for o in found) or 1
    return {
        "objectives": float(len(found)),
        "hit_rate": sum(o.hit for o in found) / total,
        "partial_hit_rate": sum(o.partial for o in found) / total,
        "code_recall": sum(len(o.expected) - len(o.missing) for o in found) / expected,
        "uf_accuracy": sum(o.uf_ok for o in found) / total,
        "no_segment": sum(not o.segmentos for o in found) / total,
        "mean_codes": sum(len(o.reached) for o in found) / total,
    }


def evaluate(path: Path = DEFAULT_SET) -> dict[str, float]:
    """The measures of a labelled set (fractions in 0..1, the count and a mean)."""
    return _metrics(outcomes(path))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", type=Path, default=DEFAULT_SET, help="labelled objectives")
    parser.add_argument("--show-misses", action="store_true", help="list what was not reached")
    args = parser.parse_args()
    found = outcomes(args.set)
    m = _metrics(found)
    print(f"objectives        {int(m['objectives'])}")
    print(f"hit rate          {m['hit_rate']:.1%}  (every expected code reached)")
    print(f"partial hit rate  {m['partial_hit_rate']:.1%}  (at least one)")
    print(f"code recall       {m['code_recall']:.1%}")
    print(f"UF accuracy       {m['uf_accuracy']:.1%}")
    print(f"no segment found  {m['no_segment']:.1%}")
    print(f"mean codes        {m['mean_codes']:.1f}")
    if args.show_misses:
        for o in found:
            if o.hit and o.uf_ok:
                continue
            print(f"\n- {o.objetivo}")
            print(f"  rule {o.regra}, segments {', '.join(o.segmentos) or '-'}")
            if o.missing:
                print(f"  missing {', '.join(o.missing)} (expected {', '.join(o.expected)})")
            if not o.uf_ok:
                print(f"  UFs {o.ufs or '-'}, expected {o.expected_ufs or '-'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
