"""The e-mail that carries a one-time code, sent over SMTP (stdlib `smtplib` in a thread)."""

from __future__ import annotations

import asyncio
import smtplib
from email.message import EmailMessage

from app.errors import UnavailableError
from app.settings import Settings

SMTP_TIMEOUT = 10.0


def code_message(sender: str, to: str, nome: str, code: str, minutes: int) -> EmailMessage:
    message = EmailMessage()
    message["From"] = sender
    message["To"] = to
    message["Subject"] = f"Seu código de acesso: {code}"
    message.set_content(
        f"Olá, {nome}.\n\n"
        f"Seu código de acesso à API é {code}. Ele vale por {minutes} minutos e só pode ser "
        "usado uma vez.\n\nSe você não pediu este código, ignore esta mensagem.\n"
    )
    return message


def admin_message(sender: str, to: str, nome: str) -> EmailMessage:
    """The answer to a code asked for an administrator account: no code, and why."""
    message = EmailMessage()
    message["From"] = sender
    message["To"] = to
    message["Subject"] = "Pedido de código de acesso"
    message.set_content(
        f"Olá, {nome}.\n\n"
        "Alguém pediu um código de acesso à API para este e-mail. Ele pertence a uma conta de "
        "administrador, que não recebe chaves por código: use `registry-admin "
        "create-admin-key` no servidor.\n\nSe você não fez este pedido, ignore esta mensagem.\n"
    )
    return message


def _send(settings: Settings, message: EmailMessage) -> None:
    with smtplib.SMTP(settings.smtp_host, settings.smtp_port, timeout=SMTP_TIMEOUT) as smtp:
        if settings.smtp_starttls:
            smtp.starttls()
        if settings.smtp_user:
            smtp.login(settings.smtp_user, settings.smtp_password)
        smtp.send_message(message)


async def send(settings: Settings, message: EmailMessage) -> None:
    """Sends the message; 503 when the SMTP server refuses it or does not answer."""
    try:
        await asyncio.to_thread(_send, settings, message)
    except (OSError, smtplib.SMTPException) as error:
        raise UnavailableError(
            "Não foi possível enviar o e-mail agora; tente novamente.",
            headers={"Retry-After": "30"},
        ) from error
