"""The OpenAPI document against the running service: Schemathesis generates requests from it
(examples, boundary values, fuzzed values, stateful sequences) and checks every answer: no
server error, a documented status, the documented content type, a body that conforms to its
schema. A short run, deterministic; `scripts/contract.py` runs the long one. The document's
custom formats come from `scripts/contract_formats.py`."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT, Server, new_key, serving

sys.path.insert(0, str(ROOT / "scripts"))
from contract import hooks_env

CHECKS = (
    "not_a_server_error,status_code_conformance,content_type_conformance,"
    "response_schema_conformance"
)
AGENT = "^/(api/)?mcp"
"""The agent interface is JSON-RPC: the MCP SDK client and the conformance suite test it."""


@pytest.fixture(scope="module")
def server(peer_alias: str) -> Iterator[Server]:
    with serving(peer_alias) as running:
        yield running


def run(server: Server, key: str, report: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ROOT / ".venv" / "bin" / "schemathesis"), "run", f"{server.url}/schema/openapi.json",
         "--checks", CHECKS, "--exclude-path-regex", AGENT, "--generation-deterministic",
         "--header", f"Authorization: Bearer {key}",
         "--report", "junit", "--report-junit-path", str(report), "--no-color", *options],
        cwd=ROOT, capture_output=True, text=True, timeout=900, check=False, env=hooks_env(),
    )  # fmt: skip


@pytest.mark.parametrize("papel", ["usuario", "admin"])
def test_every_operation_answers_as_documented(server: Server, papel: str, tmp_path: Path) -> None:
    key = new_key(papel=papel).key
    done = run(server, key, tmp_path / "junit.xml", "--max-examples", "5")
    assert done.returncode == 0, done.stdout[-12000:] + done.stderr[-2000:]
    summary = done.stdout[done.stdout.rindex("Test cases:") :]
    generated = int(summary.split()[2])
    assert generated > 1000, summary  # every operation, several cases each
    assert "passed" in summary.splitlines()[1], summary
