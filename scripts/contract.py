"""The long contract run: Schemathesis against a running service, with a user's key and an
administrator's, every operation of the OpenAPI document but the agent interface.

    .venv/bin/python scripts/contract.py --url http://127.0.0.1:8000 [--examples 100]

Checks every answer: no server error, a documented status, the documented content type, a body
conforming to its schema (phases: examples, coverage, fuzzing, stateful). Keys are made for the
bench account and a `contract-admin@localhost` administrator (the database of `DATABASE_URL`;
`API_KEY_SECRET` must be the server's). Prints each run's summary; exits non-zero on a failure.
The test command runs a short version (`tests/contract/`).
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from loadgen import BENCH_PLAN, bench_key  # noqa: E402

from app.accounts import service  # noqa: E402
from app.accounts.keys import check_secret  # noqa: E402
from app.settings import get_settings  # noqa: E402

CHECKS = (
    "not_a_server_error,status_code_conformance,content_type_conformance,"
    "response_schema_conformance"
)


async def _admin_key() -> str:
    settings = get_settings()
    secret = check_secret(settings.api_key_secret)
    async with await psycopg.AsyncConnection.connect(settings.database_url) as conn:
        conta, _ = await service.ensure_account(
            conn, nome="Contract", email="contract-admin@localhost", telefone="",
            plano=BENCH_PLAN, papel="admin",
        )  # fmt: skip
        await conn.execute(
            "UPDATE chaves SET revogada_em = now() WHERE conta_id = %s AND revogada_em IS NULL",
            (conta.id,),
        )
        return (await service.issue_key(conn, secret, conta.id, "contract", [])).api_key


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--examples", type=int, default=100)
    args = parser.parse_args()
    keys = {"usuario": bench_key(), "admin": asyncio.run(_admin_key())}
    status = 0
    for role, key in keys.items():
        done = subprocess.run(
            [str(ROOT / ".venv" / "bin" / "schemathesis"), "run",
             f"{args.url}/schema/openapi.json", "--checks", CHECKS,
             "--exclude-path-regex", "^/(api/)?mcp", "--generation-deterministic",
             "--max-examples", str(args.examples), "--no-color",
             "--header", f"Authorization: Bearer {key}"],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        print(f"== {role}: exit {done.returncode}")
        print(
            done.stdout[done.stdout.find("SUMMARY") - 40 :]
            if "SUMMARY" in done.stdout
            else done.stdout
        )
        status = status or done.returncode
    sys.exit(status)


if __name__ == "__main__":
    main()
