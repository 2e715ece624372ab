"""`registry-admin create-admin-key`: the first administrator key of an install."""

from __future__ import annotations

import os
import pty
import re
import stat
import subprocess
import uuid
from pathlib import Path

import msgspec

from app.accounts.service import Email
from app.cli import ADMIN_EMAIL
from tests.conftest import ROOT, Server
from tests.loopback import free_port

ADMIN_CLI = ROOT / ".venv" / "bin" / "registry-admin"


def _admin_key(email: str, *options: str, redis_prefix: str | None = None) -> str:
    """A key from `registry-admin create-admin-key`, run with the API's Redis prefix (as in a
    deployment, where both read the same settings)."""
    env = {**os.environ, **({"REDIS_PREFIX": redis_prefix} if redis_prefix else {})}
    done = subprocess.run(
        [str(ADMIN_CLI), "create-admin-key", "--email", email, "--rotulo", "ci", *options],
        capture_output=True, text=True, check=True, cwd=ROOT, env=env,
    )  # fmt: skip
    return done.stdout.strip()


def test_create_admin_key_replace_revokes_same_label(database: str, api_server: Server) -> None:
    email = f"admin-{uuid.uuid4().hex[:8]}@example.com"
    first = _admin_key(email)
    kept = _admin_key(email)

    def status(key: str) -> int:
        with api_server.client(headers={"Authorization": f"Bearer {key}"}) as client:
            return client.get("/v1/admin/auditoria", params={"limit": 1}).status_code

    for _ in range(10):  # both keys cached by both workers before the replacement
        assert status(first) == status(kept) == 200
    replacing = _admin_key(email, "--replace", redis_prefix=api_server.redis_prefix)
    assert status(replacing) == 200
    for _ in range(10):  # refused at once by every worker
        assert status(first) == status(kept) == 401
    with api_server.client(headers={"Authorization": f"Bearer {replacing}"}) as client:
        listed = client.get("/v1/me/chaves").json()["data"]
    assert [k["revogada_em"] is None for k in listed] == [False, False, True]


ADMIN_SCRIPT = ROOT / "scripts" / "admin_key.sh"


def _script_env(email: str, key_file: Path) -> dict[str, str]:
    return {**os.environ, "ADMIN_EMAIL": email, "ADMIN_KEY_FILE": str(key_file)}


def _works(server: Server, key: str) -> bool:
    with server.client(headers={"Authorization": f"Bearer {key}"}) as client:
        return client.get("/v1/admin/auditoria", params={"limit": 1}).status_code == 200


def test_admin_key_script_without_terminal_writes_owner_only_file(
    database: str, api_server: Server, tmp_path: Path
) -> None:
    """Run by a service manager or with its output in a log, the key never reaches stdout."""
    email = f"admin-{uuid.uuid4().hex[:8]}@example.com"
    key_file = tmp_path / "state" / "admin-key"
    done = subprocess.run(
        ["bash", str(ADMIN_SCRIPT)], capture_output=True, text=True, check=True, cwd=ROOT,
        env=_script_env(email, key_file),
    )  # fmt: skip
    key = key_file.read_text().strip()
    assert key.startswith("cnpj_")
    assert key not in done.stdout + done.stderr
    assert "cnpj_" not in done.stdout + done.stderr
    assert str(key_file) in done.stdout
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert _works(api_server, key)


def test_admin_key_script_on_terminal_prints_key(
    database: str, api_server: Server, tmp_path: Path
) -> None:
    email = f"admin-{uuid.uuid4().hex[:8]}@example.com"
    key_file = tmp_path / "admin-key"
    primary, secondary = pty.openpty()
    try:
        done = subprocess.run(
            ["bash", str(ADMIN_SCRIPT)], stdout=secondary, stderr=subprocess.PIPE, check=True,
            cwd=ROOT, env=_script_env(email, key_file),
        )  # fmt: skip
        os.close(secondary)
        output = b""
        while chunk := _read(primary):
            output += chunk
    finally:
        os.close(primary)
    assert done.returncode == 0
    found = re.search(r"cnpj_[0-9a-f]{8}_[A-Za-z0-9_-]{43}", output.decode())
    assert found
    assert not key_file.exists()
    assert _works(api_server, found.group())


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, 4096)
    except OSError:  # the terminal's other end is closed: all was read
        return b""


def test_replace_with_redis_away_warns_and_still_replaces(database: str) -> None:
    """The revocation is in PostgreSQL; when Redis cannot take the news, the command says the
    processes' caches will drop the revoked keys within their lifetime instead of at once."""
    email = f"admin-{uuid.uuid4().hex[:8]}@example.com"
    _admin_key(email)
    env = {**os.environ, "REDIS_URL": f"redis://127.0.0.1:{free_port()}/0"}
    done = subprocess.run(
        [str(ADMIN_CLI), "create-admin-key", "--email", email, "--rotulo", "ci", "--replace"],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().startswith("cnpj_")
    assert "Redis did not answer" in done.stderr
    assert "Traceback" not in done.stderr


def test_admin_key_only_for_an_address_the_dashboard_takes(database: str) -> None:
    """An address the dashboard's sign-in refuses would make an administrator who can never
    sign in there: refused before anything is created; the default is one it takes."""
    refused = subprocess.run(
        [str(ADMIN_CLI), "create-admin-key", "--email", "admin@localhost"],
        capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    assert refused.returncode == 2
    assert "admin@localhost" in refused.stderr
    assert refused.stdout == ""
    msgspec.convert(ADMIN_EMAIL, Email)  # the default passes the sign-in's own rule
