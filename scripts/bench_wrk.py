"""Closed-loop throughput of `GET /v1/cnpj/{cnpj}` with wrk (random keys of the alias, a Bearer
key of an unthrottled plan): requests per second and wrk's latency distribution, beside the
same `term` search sent to Elasticsearch alone in the same run. With `--batch N`, of
`POST /v1/cnpj/lote` with N distinct random CNPJs a call (records per second too).

    .venv/bin/python scripts/bench_wrk.py --url http://127.0.0.1:8000 [--alias empresas] \
        [--seconds 10] [--connections 32] [--threads 2] [--rounds 2]

Needs `wrk` (Debian's package) on the PATH, the services of `scripts/services.sh env` and
`API_KEY_SECRET` set to the server's. Each round runs the API, then Elasticsearch, so drifts
in the machine's load fall on both.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.settings import get_settings  # noqa: E402
from scripts.loadgen import bench_key  # noqa: E402

LUA = """
local cnpjs = {%(cnpjs)s}
local headers = {%(headers)s}
request = function()
  return wrk.format("GET", "%(prefix)s" .. cnpjs[math.random(#cnpjs)] .. "%(suffix)s", headers)
end
"""

BATCH_LUA = """
local cnpjs = {%(cnpjs)s}
local headers = {%(headers)s}
headers["Content-Type"] = "application/json"
request = function()
  local picked = {}
  for i = 1, %(size)d do
    local j = math.random(i, #cnpjs)
    cnpjs[i], cnpjs[j] = cnpjs[j], cnpjs[i]
    picked[i] = '"' .. cnpjs[i] .. '"'
  end
  return wrk.format("POST", "/v1/cnpj/lote", headers, "[" .. table.concat(picked, ",") .. "]")
end
"""


def _numbers(es: str, alias: str) -> list[str]:
    answer = httpx.post(
        f"{es}/{alias}/_search",
        json={"size": 2000, "_source": ["cnpj"], "query": {"match_all": {}}},
        timeout=30,
    ).json()
    return [hit["_source"]["cnpj"] for hit in answer["hits"]["hits"]]


def _script(
    numbers: list[str], headers: dict[str, str], prefix: str, suffix: str = "", batch: int = 0
) -> Path:
    """A wrk script sending GET `prefix` + a random CNPJ + `suffix`, or with `batch`, POST
    `/v1/cnpj/lote` with that many distinct random CNPJs."""
    text = (BATCH_LUA if batch else LUA) % {
        "cnpjs": ",".join(f'"{n}"' for n in numbers),
        "headers": ",".join(f'["{k}"]="{v}"' for k, v in headers.items()),
        "prefix": prefix,
        "suffix": suffix,
        "size": batch,
    }
    handle = tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False)  # noqa: SIM115
    handle.write(text)
    handle.close()
    return Path(handle.name)


def _wrk(url: str, script: Path, args: argparse.Namespace) -> dict[str, float]:
    done = subprocess.run(
        ["wrk", f"-t{args.threads}", f"-c{args.connections}", f"-d{args.seconds}s",
         "--latency", "-s", str(script), url],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    out = done.stdout
    rate = re.search(r"Requests/sec:\s+([\d.]+)", out)
    if rate is None:
        raise SystemExit(f"wrk printed no rate:\n{out}")
    found: dict[str, float] = {"req_s": round(float(rate[1]))}
    for label in ("50%", "90%", "99%"):
        match = re.search(rf"{label}\s+([\d.]+)(us|ms|s)", out)
        if match:
            value = float(match[1]) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[match[2]]
            found[f"p{label[:-1]}_ms"] = round(value, 2)
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    found["non_2xx"] = int(errors[1]) if errors else 0
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--alias", default="empresas")
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--batch", type=int, default=0, help="POST /v1/cnpj/lote with this many CNPJs instead"
    )
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is not on the PATH: install Debian's package (apt-get install wrk)")
    es = get_settings().elasticsearch_url
    numbers = _numbers(es, args.alias)
    key = bench_key()
    api = _script(numbers, {"Authorization": f"Bearer {key}"}, "/v1/cnpj/", batch=args.batch)
    # The lookup's own query: a `term` on `cnpj`, the record without the search fields.
    alone = _script(numbers, {}, f"/{args.alias}/_search?q=cnpj:",
                    "&_source_excludes=busca&filter_path=hits.hits._source")  # fmt: skip
    results = []
    for round_ in range(args.rounds):
        served = _wrk(args.url, api, args)
        if args.batch:
            served["records_s"] = served["req_s"] * args.batch
        results.append({"round": round_ + 1, "api": served,
                        "elasticsearch": _wrk(es, alone, args)})  # fmt: skip
        print(json.dumps(results[-1]))


if __name__ == "__main__":
    main()
