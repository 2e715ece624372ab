"""Memory of the API's worker processes under a mixed load: lookups, batches and searches at
once, open loop, for `--seconds` (10 minutes by default), sampling each worker's own memory
(RssAnon) and its mapped file pages (RssFile: the record store's pages, shared with every
process and dropped by the kernel at will) every `--every` seconds.

    .venv/bin/python scripts/bench_memory.py --url http://127.0.0.1:8200 --alias bench \
        --server-pid <registry-api's pid> [--seconds 600]

Needs the services of `scripts/services.sh env` and `API_KEY_SECRET` set to the server's.
Prints one line per sample, then each worker's first, peak and last figures; the load
generators' own summaries follow.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts.loadgen import bench_key  # noqa: E402

PYTHON = sys.executable


def _memory(pid: int) -> tuple[int, int]:
    """RssAnon and RssFile of `pid`, in MiB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("RssAnon", "RssFile"):
            fields[name] = int(value.split()[0]) // 1024
    return fields["RssAnon"], fields["RssFile"]


def _loads(args: argparse.Namespace) -> list[subprocess.Popen[str]]:
    """The three load generators, sharing one key (a new bench key revokes the earlier ones)."""
    common = ["--url", args.url, "--alias", args.alias, "--seconds", str(args.seconds),
              "--api-key", bench_key()]  # fmt: skip
    scripts = ROOT / "scripts"
    commands = [
        [PYTHON, str(scripts / "bench_api.py"), *common, "--rate", str(args.lookups)],
        [PYTHON, str(scripts / "bench_api.py"), *common, "--rate", str(args.batches),
         "--batch", "100"],
        [PYTHON, str(scripts / "bench_search.py"), *common, "--rate", str(args.searches),
         "--endpoint", "search"],
    ]  # fmt: skip
    return [
        subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for command in commands
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--alias", default="empresas")
    parser.add_argument("--server-pid", type=int, required=True)
    parser.add_argument("--seconds", type=int, default=600)
    parser.add_argument("--every", type=float, default=10)
    parser.add_argument("--lookups", type=float, default=500, help="lookups a second")
    parser.add_argument("--batches", type=float, default=20, help="batches of 100 a second")
    parser.add_argument("--searches", type=float, default=40, help="searches a second")
    args = parser.parse_args()
    workers = [child.pid for child in psutil.Process(args.server_pid).children()]
    workers = [pid for pid in workers if "multiprocessing.spawn" in " ".join(
        psutil.Process(pid).cmdline()) and "resource_tracker" not in " ".join(
        psutil.Process(pid).cmdline())]  # fmt: skip
    samples: dict[int, list[tuple[int, int]]] = {pid: [] for pid in workers}
    loads = _loads(args)
    started = time.monotonic()
    while any(load.poll() is None for load in loads):
        for pid in workers:
            samples[pid].append(_memory(pid))
        shown = "  ".join(f"{pid}: anon {a} MiB, file {f} MiB" for pid, (a, f) in
                          ((pid, s[-1]) for pid, s in samples.items()))  # fmt: skip
        print(f"{time.monotonic() - started:6.0f} s  {shown}", flush=True)
        time.sleep(args.every)
    for pid, taken in samples.items():
        anon = [a for a, _ in taken]
        files = [f for _, f in taken]
        print(
            f"worker {pid}: RssAnon first {anon[0]} peak {max(anon)} last {anon[-1]} MiB; "
            f"RssFile first {files[0]} peak {max(files)} last {files[-1]} MiB"
        )
    for load in loads:
        out, _ = load.communicate()
        lines = out.strip().splitlines()
        summary = [n for n, line in enumerate(lines) if ": requests " in line]
        # the whole summary: its totals, overall latency and one line a status
        print("\n".join(lines[summary[-1] :]) if summary else "(no summary)\n" + out[-2000:])


if __name__ == "__main__":
    main()
