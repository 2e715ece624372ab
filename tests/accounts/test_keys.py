"""Key and code generation, and their keyed hashes."""

from __future__ import annotations

import pytest

from app.accounts import keys

SECRET = b"s" * 32


def test_new_key_shape_prefix_id_and_256_bits() -> None:
    key_id, key = keys.new_key()
    assert key.startswith(f"cnpj_{key_id}_")
    assert keys.key_id(key) == key_id
    assert len(key) == len(f"cnpj_{key_id}_") + 43  # 32 random bytes, base64url


def test_new_key_never_repeats() -> None:
    assert len({keys.new_key()[1] for _ in range(1000)}) == 1000


@pytest.mark.parametrize(
    "text",
    ["", "cnpj_", "cnpj_zzzzzzzz_" + "a" * 43, "xnpj_0123abcd_" + "a" * 43, "cnpj_0123abcd_a"],
)
def test_key_id_malformed_none(text: str) -> None:
    assert keys.key_id(text) is None


def test_digest_depends_on_server_secret() -> None:
    _, key = keys.new_key()
    stored = keys.digest(SECRET, key)
    assert keys.matches(SECRET, key, stored)
    assert not keys.matches(b"t" * 32, key, stored)
    assert key.encode() not in stored


def test_check_secret_short_refused() -> None:
    with pytest.raises(ValueError, match="API_KEY_SECRET"):
        keys.check_secret("short")


def test_code_eight_digits_bound_to_email() -> None:
    code = keys.new_code()
    assert len(code) == 8
    assert code.isdigit()
    stored = keys.code_digest(SECRET, "a@example.com", code)
    assert keys.code_matches(SECRET, "a@example.com", code, stored)
    assert not keys.code_matches(SECRET, "b@example.com", code, stored)
