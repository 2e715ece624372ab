"""Rendering helpers: a page from a template with the visit's cookies and form token, form
values read as text, redirects after a form (303, so a reload does not repeat it), and a
record as nested HTML lists."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qsl

from litestar import Request
from litestar.enums import RequestEncodingType
from litestar.exceptions import ClientException
from litestar.exceptions.http_exceptions import RequestEntityTooLarge
from litestar.response import Redirect, Template
from markupsafe import Markup, escape

from app.accounts.repository import Perfil
from app.auth.gate import Gate
from app.auth.gate import text as storable
from app.context import Backends
from app.errors import AppError, BadRequestError
from app.lib.body import refuse_repeated, single_values
from app.lib.wording import shown
from app.web.visit import CSRF_FIELD, Visita, check_form, draw, require_account

NO_STORE = {
    "Cache-Control": "no-store",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "frame-ancestors 'none'",
}
"""Pages show account data (and a new key once): never cached, never referred elsewhere, never
framed by another site (clickjacking)."""
MAX_FIELD = 8000
"""Characters of the longest form value read (an allowlist of 100 networks is about 4,400);
a longer one is refused, not cut: a cut list or URL would be stored as something else than
what was sent. Each field's own limit is then the service's."""


def page(
    request: Request[Any, Any, Any],
    visita: Visita,
    template: str,
    status: int = 200,
    headers: dict[str, str] | None = None,
    failure: Exception | None = None,
    **context: Any,
) -> Template:
    """The page; with a `failure` that is a refusal (`AppError`), its headers too (`Retry-After`
    of a 429 or a 503, the window's), as the API sends them."""
    if isinstance(failure, AppError):
        headers = {**(headers or {}), **failure.headers}
    context.update(visita=visita, csrf_field=CSRF_FIELD, path=request.scope["path"])
    return Template(
        template_name=template, context=context, status_code=status,
        headers={**NO_STORE, **(headers or {})}, cookies=visita.cookies,
    )  # fmt: skip


def redirect(visita: Visita, path: str) -> Redirect:
    return Redirect(path, status_code=303, headers=NO_STORE, cookies=visita.cookies)


async def form_of(request: Request[Any, Any, Any], lists: tuple[str, ...] = ()) -> dict[str, Any]:
    """The submitted form: each field's text (a 400 past `MAX_FIELD` characters), and the fields
    named in `lists` as the list of their values. Any other field given twice is a 400 naming
    it, as on the API and `/busca`, rather than one of its values taken silently."""
    given: dict[str, list[str]] = {}
    for key, item in await _pairs(request):
        given.setdefault(key[:100], []).append(_field(key, item))
    values: dict[str, Any] = {name: given.pop(name) for name in lists if name in given}
    refuse_repeated(given)
    return {**single_values(given), **values}


async def _pairs(request: Request[Any, Any, Any]) -> list[tuple[str, Any]]:
    """The form's fields in order. A URL-encoded body is read strictly: its bytes are ASCII and
    its escapes UTF-8, as browsers send them (the framework reads it as Latin-1 and replaces
    what is not UTF-8, which would store `produção` as `produÃ§Ã£o`)."""
    unreadable = BadRequestError(
        "Formulário ilegível: um campo não está na codificação que declara (use UTF-8)."
    )
    if request.content_type[0] == RequestEncodingType.URL_ENCODED:
        try:
            text = (await request.body()).decode("ascii")
            return parse_qsl(text, keep_blank_values=True, encoding="utf-8", errors="strict")
        except UnicodeError:
            raise unreadable from None
    try:
        return list((await request.form()).multi_items())
    except (UnicodeError, LookupError):  # a part's bytes not in its (or a known) charset
        raise unreadable from None
    except RequestEntityTooLarge:
        raise
    except ClientException as error:  # no boundary, a malformed body, too many parts
        raise BadRequestError(
            "Formulário ilegível: o corpo multipart/form-data está malformado ou tem partes demais."
        ) from error


def _field(name: str, value: Any) -> str:
    """A form value as text; a file, a value past `MAX_FIELD`, or text PostgreSQL and the pages
    cannot carry (a NUL, a lone surrogate from a UTF-7 part), is a 400 naming its field."""
    said = storable(shown(name), 100)
    if not isinstance(value, str):
        raise BadRequestError(f"O campo {said} não aceita arquivo.", details={"campo": said})
    if _UNSTORABLE.search(name + value):
        raise BadRequestError(f"O campo {said} tem um caractere inválido.", details={"campo": said})
    if len(value) > MAX_FIELD:
        raise BadRequestError(
            f"O campo {said} passa de {MAX_FIELD} caracteres.", details={"campo": said}
        )
    return value


_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


async def action(
    request: Request[Any, Any, Any],
    visita: Visita,
    backends: Backends,
    gate: Gate,
    lists: tuple[str, ...] = (),
) -> tuple[Perfil, dict[str, Any]]:
    """An account's form submission, admitted: the signed-in account (else the sign-in page),
    the form (`form_of`) checked against CSRF and other origins, and one unit drawn from the
    plan."""
    perfil = require_account(request, visita)
    form = await form_of(request, lists)
    check_form(request, visita, form, backends.secret)
    await draw(request, gate, visita)
    return perfil, form


def text(form: dict[str, Any], name: str) -> str:
    return str(form.get(name, "")).strip()


def texts(form: dict[str, Any], name: str) -> list[str]:
    """The values of a field `form_of` was told takes a list."""
    value = form.get(name, [])
    return [item.strip() for item in (value if isinstance(value, list) else [value])]


def ficha(valor: Any) -> Markup:
    """A record as nested HTML lists: a dict as `<dl>` (its empty fields left out, `_` in
    names read as spaces), a list or tuple as `<ol>`, anything else as its escaped text. Written in
    Python because a full record is a hundred-odd nested values: a recursive template macro
    was most of the company page's rendering time."""
    # Every piece put into the Markup below is escaped (`escape`) or is itself made here:
    # formatting with Markup's own `format` would escape the same way four times slower.
    if isinstance(valor, dict):  # concrete types: the record is `msgspec.to_builtins`' output
        itens = "".join(
            f"<dt>{escape(str(chave).replace('_', ' '))}</dt><dd>{ficha(item)}</dd>"
            for chave, item in valor.items()
            if item not in _VAZIOS
        )
        return Markup(f'<dl class="ficha">{itens}</dl>')  # noqa: S704
    if isinstance(valor, list | tuple):
        itens = "".join(f"<li>{ficha(item)}</li>" for item in valor)
        return Markup(f"<ol>{itens}</ol>")  # noqa: S704
    return escape(valor)


_VAZIOS: tuple[Any, ...] = (None, "", [], {})
