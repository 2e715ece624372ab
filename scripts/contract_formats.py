"""The OpenAPI document's custom formats, taught to Schemathesis (loaded with
`SCHEMATHESIS_HOOKS=contract_formats` and `scripts/` on the Python path, as
`scripts/contract.py` and `tests/contract/` do).

- `cnpj`: 14 characters, the first twelve digits or (alphanumeric CNPJs) letters of either case,
  the last two their check digits; plain or punctuated (`33.683.111/0002-80`). The check
  digits are computed by python-stdnum for numeric CNPJs and by Receita's published rule
  (`app.domain.cnpj`, itself checked against stdnum) for alphanumeric ones.
- `ip-network`: an IPv4 or IPv6 address or network without host bits (`203.0.113.0/24`).

Without them, almost every generated CNPJ fails its check digits and the fuzzer learns little
beyond the 400 answer.
"""

from __future__ import annotations

import ipaddress
import string

import schemathesis
from hypothesis import strategies as st
from stdnum.br import cnpj as stdnum_cnpj

from app.domain.cnpj import check_digits, format_cnpj

_ALPHANUMERIC = string.digits + string.ascii_uppercase


@st.composite
def cnpjs(draw: st.DrawFn) -> str:
    """A valid CNPJ, numeric (most) or alphanumeric, plain or punctuated, either case."""
    if draw(st.integers(0, 3)):
        body = draw(st.text(string.digits, min_size=12, max_size=12))
        body = body if body.strip("0") else "1" + body[1:]
        value = body + stdnum_cnpj.calc_check_digits(body)
    else:
        body = draw(st.text(_ALPHANUMERIC, min_size=12, max_size=12))
        body = body if body.strip("0") else "A" + body[1:]
        value = body + check_digits(body)
        if draw(st.booleans()):
            value = value.lower()
    return format_cnpj(value) if draw(st.booleans()) else value


def _networks() -> st.SearchStrategy[str]:
    def network(address: ipaddress.IPv4Address | ipaddress.IPv6Address, prefix: int) -> str:
        prefix = min(prefix, address.max_prefixlen)
        return str(ipaddress.ip_network(f"{address}/{prefix}", strict=False))

    return st.builds(network, st.ip_addresses(), st.integers(8, 128))


schemathesis.openapi.format("cnpj", cnpjs())
schemathesis.openapi.format("ip-network", st.one_of(st.ip_addresses().map(str), _networks()))
