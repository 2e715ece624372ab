"""Benchmark the indexer end to end on generated months; prints throughput, time and memory.

    .venv/bin/python scripts/bench_indexer.py [--sizes 100000 1000000] [--out bench-out]

For each size it generates the month once (scripts/generate_month.py, fixed seed, cached under
--out), runs `indexer load` into the alias `bench-<size>` as a separate process and samples
every 0.2 s the resident memory of that process and its reader and builder processes (summed;
DuckDB runs inside them) and of Elasticsearch, and the CPU time each side used. The indexer's
memory is printed three ways: RSS summed over the processes (a shared library's pages counted
once per process), their own memory (RssAnon: heap and stacks) and PSS (each shared page split
among the processes that map it: what the whole load holds).
Elasticsearch must be running (scripts/services.sh up). Every release of the alias
`bench-<size>` is deleted before its load (so each run starts alike), and the indices it creates
are dropped at the end unless --keep is given.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from indexer import elastic, records  # noqa: E402


def _elasticsearch_process() -> psutil.Process | None:
    for process in psutil.process_iter(["cmdline"]):
        cmdline = process.info["cmdline"] or []
        if any("org.elasticsearch.bootstrap.Elasticsearch" in part for part in cmdline):
            return process
    return None


def _month(out: Path, size: int, seed: int) -> Path:
    folder = out / f"month-{size}"
    marker = folder / ".generated"
    made = f"{size} {seed} with tax regimes"  # months cached before the regime files: made again
    if not marker.exists() or marker.read_text() != made:
        subprocess.run(
            [sys.executable, str(ROOT / "scripts" / "generate_month.py"), str(folder),
             "--establishments", str(size), "--seed", str(seed)],
            check=True,
        )  # fmt: skip
        marker.write_text(made)
    return folder


def _anonymous(pid: int) -> int:
    """Bytes of a process's resident memory that are its own (heap, stacks), not mapped files
    such as the record store, which the page cache holds and can drop."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("RssAnon:"):
            return int(line.split()[1]) * 1024
    return 0


def run(size: int, out: Path, seed: int, url: str, extra: list[str]) -> dict[str, float]:
    folder = _month(out, size, seed)
    alias = f"bench-{size}"
    es = elastic.connect(url)
    stores = out / "registros"
    for info in elastic.list_indices(es, alias):
        elastic.delete_release(es, info.name)
        records.delete(stores, info.name)
    report_path = out / f"report-{size}.json"
    search = _elasticsearch_process()
    children_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    es_cpu_before = sum(search.cpu_times()[:2]) if search else 0.0
    started = time.perf_counter()
    output = out / f"indexer-{size}.log"
    with output.open("wb") as log:  # what the indexer said, kept to tell why a load failed
        process = psutil.Popen(
            [str(ROOT / ".venv" / "bin" / "indexer"), "load", str(folder), "--alias", alias,
             "--report", str(report_path), "--bad-rows", str(out / f"bad-rows-{size}.csv"),
             "--records-dir", str(stores), *extra],
            stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "ELASTICSEARCH_URL": url},
        )  # fmt: skip
    peak_indexer = peak_search = peak_anonymous = peak_proportional = 0
    while process.poll() is None:
        try:
            family = [process, *process.children(recursive=True)]
            peak_indexer = max(peak_indexer, sum(p.memory_info().rss for p in family))
            peak_anonymous = max(peak_anonymous, sum(_anonymous(p.pid) for p in family))
            peak_proportional = max(
                peak_proportional, sum(p.memory_full_info().pss for p in family)
            )
        except (psutil.Error, OSError):
            pass
        if search:
            peak_search = max(peak_search, search.memory_info().rss)
        time.sleep(0.2)
    wall = time.perf_counter() - started
    children_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    indexer_cpu = (children_after.ru_utime + children_after.ru_stime) - (
        children_before.ru_utime + children_before.ru_stime
    )
    if process.returncode != 0:
        said = output.read_text(errors="replace").splitlines()[-20:]
        raise SystemExit(
            f"indexer failed with exit code {process.returncode}; the end of {output}:\n"
            + "\n".join(said)
        )
    report = json.loads(report_path.read_text())
    es_cpu = (sum(search.cpu_times()[:2]) - es_cpu_before) if search else 0.0
    es.close()
    return {
        "establishments": size,
        "documents": report["documents_written"],
        "wall_s": round(wall, 1),
        "docs_per_s": round(report["documents_written"] / wall),
        "indexer_peak_rss_mb": round(peak_indexer / 2**20),
        "indexer_peak_anon_mb": round(peak_anonymous / 2**20),
        "indexer_peak_pss_mb": round(peak_proportional / 2**20),
        "indexer_cpu_s": round(indexer_cpu, 1),
        "elasticsearch_peak_rss_mb": round(peak_search / 2**20),
        "elasticsearch_cpu_s": round(es_cpu, 1),
        "record_store_mib": round(report.get("records_bytes", 0) / 2**20),
        **{f"{name}_s": seconds for name, seconds in report["phases"].items()},
        **{f"{name}_cpu_s": seconds for name, seconds in report.get("phases_cpu", {}).items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--out", type=Path, default=ROOT / "bench-out")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", action="store_true", help="Keep the benchmark indices.")
    parser.add_argument(
        "--url", default=os.environ.get("ELASTICSEARCH_URL", "http://127.0.0.1:9200")
    )
    parser.add_argument(
        "--load-option",
        action="append",
        default=[],
        help="Passed to `indexer load` (repeat it: --load-option=--batch-size --load-option=5000)",
    )
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    results = [run(size, args.out, args.seed, args.url, args.load_option) for size in args.sizes]
    columns = list(results[0])
    print("  ".join(f"{c:>{max(len(c), 8)}}" for c in columns))
    for result in results:
        print("  ".join(f"{result[c]!s:>{max(len(c), 8)}}" for c in columns))
    if len(results) > 1:
        ratio = results[-1]["wall_s"] / results[0]["wall_s"]
        scale = results[-1]["establishments"] / results[0]["establishments"]
        print(f"time ratio {results[-1]['establishments']}/{results[0]['establishments']}: "
              f"{ratio:.2f} (x{scale:g} data)")  # fmt: skip
    if not args.keep:
        es = elastic.connect(args.url)
        for size in args.sizes:
            for info in elastic.list_indices(es, f"bench-{size}"):
                elastic.delete_release(es, info.name)
                records.delete(args.out / "registros", info.name)
            records.pointer_path(args.out / "registros", f"bench-{size}").unlink(missing_ok=True)


if __name__ == "__main__":
    main()
