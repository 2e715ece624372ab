"""From the record the index stores (`Registro`) to the record callers get (`Empresa`)."""

from __future__ import annotations

import msgspec

from app.domain.cnae import activity
from app.domain.contact import full_contact
from app.domain.record import Empresa, Registro


def expand(stored: Registro) -> Empresa:
    """Add back what the index leaves out: the hierarchy and flags of the secondary
    activities and the checks of the contacts. Records written before the index left them out
    carry them too; they are recomputed by the same rules."""
    fields = msgspec.structs.asdict(stored)
    fields["cnaes_secundarios"] = [
        activity(cnae.codigo, cnae.descricao, False) for cnae in stored.cnaes_secundarios
    ]
    fields["contato"] = full_contact(stored.contato)
    return Empresa(**fields)
