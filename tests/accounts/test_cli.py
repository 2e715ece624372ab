"""`registry-admin create-admin-key`: the first administrator key of an install."""

from __future__ import annotations

import subprocess
import uuid

from tests.conftest import ROOT, Server

ADMIN_CLI = ROOT / ".venv" / "bin" / "registry-admin"


def _admin_key(email: str, *options: str) -> str:
    done = subprocess.run(
        [str(ADMIN_CLI), "create-admin-key", "--email", email, "--rotulo", "ci", *options],
        capture_output=True, text=True, check=True, cwd=ROOT,
    )  # fmt: skip
    return done.stdout.strip()


def test_create_admin_key_replace_revokes_same_label(database: str, api_server: Server) -> None:
    email = f"admin-{uuid.uuid4().hex[:8]}@example.com"
    first = _admin_key(email)
    kept = _admin_key(email)
    replacing = _admin_key(email, "--replace")

    def status(key: str) -> int:
        with api_server.client(headers={"Authorization": f"Bearer {key}"}) as client:
            return client.get("/v1/admin/auditoria", params={"limit": 1}).status_code

    assert status(replacing) == 200
    assert status(first) == status(kept) == 401
    with api_server.client(headers={"Authorization": f"Bearer {replacing}"}) as client:
        listed = client.get("/v1/me/chaves").json()["data"]
    assert [k["revogada_em"] is None for k in listed] == [False, False, True]
