"""API keys and e-mail codes: generation and keyed hashing.

A key is `cnpj_<id>_<secret>`: a recognisable prefix (so leaked keys are easy to grep for),
a public id of 8 hex characters (the row's primary key, shown in listings and audit rows) and
32 random bytes from `secrets`. Only HMAC-SHA256 of the whole key under the server secret is
stored. Keys carry 256 bits of entropy, so a fast keyed hash is enough: nobody can guess one,
and a slow password hash would cost milliseconds on every request for nothing.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from typing import Any

PREFIX = "cnpj"
KEY_SHAPE = re.compile(r"cnpj_([0-9a-f]{8})_[A-Za-z0-9_-]{43}")
CODE_DIGITS = 8
MIN_SECRET = 32


_ECHOED_KEY = re.compile(r"(cnpj_[0-9a-f]{8}_)[A-Za-z0-9_-]+")


def redacted(value: Any) -> Any:
    """`value` (a text, or the lists and objects of an error's details) with the secret part
    of anything shaped like a key, whole or cut short, replaced by `***`: an error that echoes
    the caller's input never returns a key sent in the wrong place (a parameter's name, an
    argument)."""
    if isinstance(value, str):
        return _ECHOED_KEY.sub(r"\1***", value) if "cnpj_" in value else value
    if isinstance(value, list):
        return [redacted(item) for item in value]
    if isinstance(value, dict):
        return {redacted(name): redacted(item) for name, item in value.items()}
    return value


def check_secret(secret: str) -> bytes:
    """The server secret as bytes; refuses an empty or short one."""
    if len(secret) < MIN_SECRET:
        raise ValueError(
            f"API_KEY_SECRET must be set to at least {MIN_SECRET} characters "
            "(e.g. `python -c 'import secrets; print(secrets.token_hex(32))'`)"
        )
    return secret.encode()


def new_key() -> tuple[str, str]:
    """A fresh `(id, key)`."""
    key_id = secrets.token_hex(4)
    return key_id, f"{PREFIX}_{key_id}_{secrets.token_urlsafe(32)}"


def key_id(key: str) -> str | None:
    """The public id of a well-formed key, None for anything else."""
    match = KEY_SHAPE.fullmatch(key)
    return match.group(1) if match else None


def digest(secret: bytes, value: str) -> bytes:
    return hmac.new(secret, value.encode(), hashlib.sha256).digest()


def matches(secret: bytes, value: str, stored: bytes) -> bool:
    return hmac.compare_digest(digest(secret, value), stored)


def new_code() -> str:
    return f"{secrets.randbelow(10**CODE_DIGITS):0{CODE_DIGITS}d}"


def code_digest(secret: bytes, email: str, code: str) -> bytes:
    """The stored form of a code: bound to its e-mail, so a hash says nothing on its own."""
    return digest(secret, f"{email}\n{code}")


def code_matches(secret: bytes, email: str, code: str, stored: bytes) -> bool:
    return hmac.compare_digest(code_digest(secret, email, code), stored)
