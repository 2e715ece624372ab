"""A real SMTP server on loopback (aiosmtpd) that keeps every message, for the tests of the
token bootstrap and the dashboard's sign-in."""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterator
from email import message_from_bytes
from email.message import Message
from typing import Any

from aiosmtpd.controller import Controller

from app.accounts.keys import CODE_DIGITS
from tests.loopback import free_port

CODE = re.compile(rf"\b(\d{{{CODE_DIGITS}}})\b")


class Inbox:
    """aiosmtpd handler: keeps every message it receives."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.port = free_port()
        self.refused: set[str] = set()
        """Recipients whose messages the server refuses."""

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
        if self.refused & set(envelope.rcpt_tos):
            return "554 5.7.1 Message refused"
        self.messages.append(message_from_bytes(envelope.content))
        return "250 OK"

    def message_for(self, email: str, timeout: float = 10) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for message in reversed(self.messages):
                if message["To"] == email:
                    body = message.get_payload(decode=True)
                    assert isinstance(body, bytes)
                    return body.decode()
            time.sleep(0.05)
        raise AssertionError(f"no message for {email}")

    def code_for(self, email: str, timeout: float = 10) -> str:
        found = CODE.search(self.message_for(email, timeout))
        assert found
        return found.group(1)


@contextlib.contextmanager
def receiving() -> Iterator[Inbox]:
    handler = Inbox()
    controller = Controller(handler, hostname="127.0.0.1", port=handler.port)
    controller.start()
    try:
        yield handler
    finally:
        controller.stop()
