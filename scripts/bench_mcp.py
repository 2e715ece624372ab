"""What the agent interface adds: requests/s and latency of `tools/list` and of
`tools/call consultar_cnpj`, beside `GET /v1/cnpj/{cnpj}`, in the same run, with wrk.

    .venv/bin/python scripts/bench_mcp.py --url http://127.0.0.1:8000 --alias empresas \
        [--seconds 10] [--rounds 3] [--connections 32] [--threads 2]

Each round runs the three targets one after the other (alternating, so drift of the machine
hits them alike); every request carries a Bearer key of an unthrottled bench plan, so the key
check, the rate-limit window and the audit row are included. Lookups and tool calls draw
their CNPJ at random from documents of the alias. Prints each run and the median per target.
Needs wrk (`apt-get install wrk`).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts.bench_api import sample_cnpjs  # noqa: E402
from scripts.loadgen import bench_key  # noqa: E402

LUA = """
local cnpjs = {%(cnpjs)s}
local key = "%(key)s"
local target = "%(target)s"
local list = '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
request = function()
  local cnpj = cnpjs[math.random(#cnpjs)]
  local headers = {["Authorization"] = "Bearer " .. key}
  if target == "rest" then
    return wrk.format("GET", "/v1/cnpj/" .. cnpj, headers)
  end
  headers["Content-Type"] = "application/json"
  headers["Accept"] = "application/json, text/event-stream"
  if target == "list" then
    return wrk.format("POST", "/mcp", headers, list)
  end
  local body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":' ..
    '"consultar_cnpj","arguments":{"cnpj":"' .. cnpj .. '"}}}'
  return wrk.format("POST", "/mcp", headers, body)
end
"""
TARGETS = {
    "rest": "GET /v1/cnpj/{cnpj}",
    "list": "POST /mcp tools/list",
    "call": "POST /mcp tools/call consultar_cnpj",
}
_UNIT = {"us": 0.001, "ms": 1.0, "s": 1000.0}


def _ms(text: str) -> float:
    number, unit = re.fullmatch(r"([\d.]+)(us|ms|s)", text.strip()).groups()  # type: ignore[union-attr]
    return float(number) * _UNIT[unit]


def run_wrk(url: str, script: Path, args: argparse.Namespace) -> dict[str, float]:
    done = subprocess.run(
        [
            "wrk",
            f"-t{args.threads}",
            f"-c{args.connections}",
            f"-d{args.seconds}s",
            "--latency",
            "-s",
            str(script),
            url,
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    out = done.stdout
    latency = dict(re.findall(r"^\s+(50|99)%\s+(\S+)$", out, re.MULTILINE))
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {
        "rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),  # type: ignore[union-attr]
        "p50": _ms(latency["50"]),
        "p99": _ms(latency["99"]),
        "errors": float(errors.group(1)) if errors else 0.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--alias", default=os.environ.get("INDEX_ALIAS", "empresas"))
    parser.add_argument(
        "--elasticsearch", default=os.environ.get("ELASTICSEARCH_URL", "http://127.0.0.1:9200")
    )
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--api-key", default=os.environ.get("API_KEY"))
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is needed: apt-get install wrk")
    key = args.api_key or bench_key()
    cnpjs = sample_cnpjs(args.elasticsearch, args.alias, 2000, seed=11)
    results: dict[str, list[dict[str, float]]] = {target: [] for target in TARGETS}
    with tempfile.TemporaryDirectory() as folder:
        scripts = {}
        for target in TARGETS:
            scripts[target] = Path(folder) / f"{target}.lua"
            scripts[target].write_text(
                LUA
                % {"cnpjs": ",".join(json.dumps(c) for c in cnpjs), "key": key, "target": target}
            )
        for round_ in range(1, args.rounds + 1):
            for target, label in TARGETS.items():
                found = run_wrk(args.url, scripts[target], args)
                results[target].append(found)
                print(
                    f"round {round_} {label}: {found['rps']:.0f} req/s, p50 {found['p50']:.2f} ms, "
                    f"p99 {found['p99']:.2f} ms, non-2xx {found['errors']:.0f}"
                )
    print(
        f"\nmedians over {args.rounds} rounds ({args.connections} connections, "
        f"{args.threads} wrk threads, {args.seconds} s each):"
    )
    print("| target | req/s | p50 | p99 |\n| --- | --- | --- | --- |")
    for target, label in TARGETS.items():
        runs = results[target]
        print(
            f"| {label} | {statistics.median(r['rps'] for r in runs):,.0f} | "
            f"{statistics.median(r['p50'] for r in runs):.2f} ms | "
            f"{statistics.median(r['p99'] for r in runs):.2f} ms |"
        )


if __name__ == "__main__":
    main()
