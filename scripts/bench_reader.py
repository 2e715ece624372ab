"""What reading rows costs: `indexer.reader.read_rows` over the bundled sample's establishments
repeated in memory, best of `--rounds`, in rows per second (no staging, no Elasticsearch).

    .venv/bin/python scripts/bench_reader.py [--copies 500] [--rounds 3]

To compare with another revision, check it out beside (`git worktree add /tmp/old <rev>`) and
run this script with `PYTHONPATH=/tmp/old`, in turns with a run without it.
"""

from __future__ import annotations

import argparse
import io
import time
from pathlib import Path

from indexer import reader
from indexer.sources import Kind

SAMPLE = Path(__file__).resolve().parent.parent / "fixtures" / "sample" / "ESTABELE.csv"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    data = SAMPLE.read_bytes() * args.copies
    took = []
    for _ in range(args.rounds):
        start = time.perf_counter()
        rows = sum(1 for _ in reader.read_rows(io.BytesIO(data), "bench", Kind.ESTABELECIMENTOS))
        took.append(time.perf_counter() - start)
    rounds = " ".join(f"{seconds:.2f}" for seconds in took)
    best = min(took)
    print(f"{reader.__file__}: {rows:,} rows, best {best:.2f} s ({rows / best:,.0f} rows/s), "
          f"all {rounds} s")  # fmt: skip


if __name__ == "__main__":
    main()
