"""Download throughput against a loopback server in the layout of Receita's releases, with the
failures the real one shows, and how many bytes a dropped connection costs.

    .venv/bin/python scripts/bench_download.py [--files 8] [--megabytes 64] [--parallel 4]

Serves `--files` zips of `--megabytes` each (random bytes, stored: the zip check reads them
all), drops every file's connection twice (at a third and at two thirds of what is left) and
answers 503 once for every other file; downloads the month with `indexer.download` into a
temporary folder and prints the time, the throughput, the bytes the server sent, the bytes the
client kept, and the bytes fetched twice (should be 0: resumption asks only for what is
missing). Then the same without faults, for comparison.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from indexer import download  # noqa: E402
from tests.indexer.receita_server import Faults, ReceitaServer  # noqa: E402


def _zip(megabytes: int, seed: int) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr(f"K3241.K03200Y0.D61108.PART{seed}", os.urandom(megabytes << 20))
    return buffer.getvalue()


def _run(files: dict[str, bytes], faults: Faults | None, parallel: int) -> dict[str, float]:
    server = ReceitaServer({"2026-10": files}, faults)
    folder = Path(tempfile.mkdtemp(prefix="bench-download-"))
    try:
        report = asyncio.run(download.download(folder, base=server.url, parallel=parallel))
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)
    if not report.ok:
        raise SystemExit(f"rejected: {report.rejected}")
    total = sum(len(data) for data in files.values())
    return {
        "seconds": report.seconds,
        "mib_per_s": round(total / 2**20 / report.seconds, 1),
        "bytes_total": total,
        "bytes_kept_by_client": report.bytes_fetched,
        "bytes_sent_by_server": sum(server.served.values()),
        "bytes_fetched_twice": report.bytes_fetched - total,
        "resumed_requests": len(server.ranges),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--megabytes", type=int, default=64)
    parser.add_argument("--parallel", type=int, default=4)
    args = parser.parse_args()
    files = {f"Estabelecimentos{n}.zip": _zip(args.megabytes, n) for n in range(args.files)}
    faults = Faults(
        drop_at={name: [len(data) // 3, len(data) // 3] for name, data in files.items()},
        unavailable={name: 1 for n, name in enumerate(files) if n % 2 == 0},
    )
    print("with faults:", _run(files, faults, args.parallel))
    print("without faults:", _run(files, None, args.parallel))


if __name__ == "__main__":
    main()
