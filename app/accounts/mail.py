"""The e-mail that carries a one-time code, sent over SMTP (stdlib `smtplib` in a thread), or
written to a folder (`MAIL_DIR`) where no SMTP server is wanted."""

from __future__ import annotations

import asyncio
import os
import secrets
import smtplib
import time
from email.message import EmailMessage
from pathlib import Path

from app.errors import UnavailableError
from app.settings import Settings

SMTP_TIMEOUT = 10.0


def code_message(sender: str, to: str, code: str, minutes: int) -> EmailMessage:
    """The code, and nothing a requester typed: whoever asks a code for an address chooses no
    word of the mail that address receives (a name would carry a phishing text)."""
    message = EmailMessage()
    message["From"] = sender
    message["To"] = to
    message["Subject"] = f"Seu código de acesso: {code}"
    message.set_content(
        "Olá.\n\n"
        f"Seu código de acesso à API é {code}. Ele vale por {minutes} minutos e só pode ser "
        "usado uma vez.\n\nSe você não pediu este código, ignore esta mensagem.\n"
    )
    return message


def admin_message(sender: str, to: str) -> EmailMessage:
    """The answer to a code asked for an administrator account: no code, and why."""
    message = EmailMessage()
    message["From"] = sender
    message["To"] = to
    message["Subject"] = "Pedido de código de acesso"
    message.set_content(
        "Olá.\n\n"
        "Alguém pediu um código de acesso à API para este e-mail. Ele pertence a uma conta de "
        "administrador, que não recebe chaves por código: use `registry-admin "
        "create-admin-key` no servidor.\n\nSe você não fez este pedido, ignore esta mensagem.\n"
    )
    return message


def _write(folder: str, message: EmailMessage) -> None:
    """The message as `<time>-<random>.eml` in `folder`, readable by its owner only."""
    path = Path(folder)
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    name = f"{time.time_ns()}-{secrets.token_hex(4)}.eml"
    descriptor = os.open(path / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as stream:
        stream.write(message.as_bytes())


def _send(settings: Settings, message: EmailMessage, to: str) -> None:
    if settings.mail_dir:
        _write(settings.mail_dir, message)
        return
    with smtplib.SMTP(settings.smtp_host, settings.smtp_port, timeout=SMTP_TIMEOUT) as smtp:
        if settings.smtp_starttls:
            smtp.starttls()
        if settings.smtp_user:
            smtp.login(settings.smtp_user, settings.smtp_password)
        # The stored address, not smtplib's reading of the `To:` header (which takes an address
        # list's syntax as more recipients than the one address stored).
        smtp.send_message(message, to_addrs=[to])


async def send(settings: Settings, message: EmailMessage, to: str) -> None:
    """Sends the message to `to` (the address as stored) only; 503 when the SMTP server
    refuses it or does not answer."""
    try:
        await asyncio.to_thread(_send, settings, message, to)
    except (OSError, smtplib.SMTPException) as error:
        raise UnavailableError(
            "Não foi possível enviar o e-mail agora; tente novamente.",
            headers={"Retry-After": "30"},
        ) from error
