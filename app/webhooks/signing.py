"""Signing secrets and signatures of webhooks (the Standard Webhooks scheme).

A monitor's secret is never stored: it is HMAC-SHA256 of the monitor's id and a random salt
under the server secret, so the database alone reveals nothing, the subscriber sees it once
(at creation or rotation), and rotating it means drawing a new salt. Signatures are made by the
`standardwebhooks` package: `webhook-id` (stable across retries), `webhook-timestamp` and
`webhook-signature` (`v1,` + base64 HMAC-SHA256 of `id.timestamp.body`).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from datetime import UTC, datetime

from standardwebhooks.webhooks import Webhook

PREFIX = "whsec_"


def new_salt() -> str:
    return secrets.token_hex(16)


def secret_of(server_secret: bytes, owner: int | str, salt: str) -> str:
    """The signing secret of a monitor (its id) or of a lot (`lote-<id>`), `whsec_` + base64 of
    32 bytes."""
    key = hmac.new(server_secret, f"webhook:{owner}:{salt}".encode(), hashlib.sha256)
    return PREFIX + base64.b64encode(key.digest()).decode()


def headers(
    secret: str, message_id: str, body: str, when: datetime | None = None
) -> dict[str, str]:
    """The Standard Webhooks headers of one attempt (a new timestamp and signature each)."""
    moment = (when or datetime.now(UTC)).astimezone(UTC)
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(int(moment.timestamp())),
        "webhook-signature": Webhook(secret).sign(message_id, moment, body),
        "content-type": "application/json",
        "user-agent": "cnpj-registry-webhooks/1",
    }
