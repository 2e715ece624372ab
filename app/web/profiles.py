"""A per-process cache of signed-in accounts' profiles (account, role, plan and its limit), so a
page does not cross to PostgreSQL on every request: the session still comes from Redis on each
one, so signing out takes effect at once.

The app never changes an account's plan or role; an operator who does (by SQL) sees it within
`TTL` seconds, the bound the API keys' credentials keep (`app.auth.credentials`). An entry
belongs to the credentials' epoch it was read in: a bump (a key revoked or its allowlist changed,
`registry-admin create-admin-key --replace`) empties it in every process on its next window
check, as it empties their credential caches."""

from __future__ import annotations

import time

from app.accounts.repository import Perfil
from app.auth.credentials import SIZE, TTL


class ProfileCache:
    def __init__(self, ttl: float = TTL, size: int = SIZE) -> None:
        self.ttl = ttl
        self.size = size
        self._entries: dict[int, tuple[Perfil, float, int | None]] = {}

    def get(self, conta_id: int, epoch: int | None) -> Perfil | None:
        """The profile of `conta_id` read within `ttl` seconds in the epoch `epoch`."""
        found = self._entries.get(conta_id)
        if found is None:
            return None
        perfil, stored_at, stored_epoch = found
        if stored_epoch != epoch or epoch is None or time.monotonic() - stored_at > self.ttl:
            del self._entries[conta_id]
            return None
        return perfil

    def put(self, conta_id: int, perfil: Perfil, epoch: int | None) -> None:
        if epoch is None:  # no window seen yet: nothing tells this process of a change
            return
        if len(self._entries) >= self.size and conta_id not in self._entries:
            self._entries.pop(next(iter(self._entries)))
        self._entries[conta_id] = (perfil, time.monotonic(), epoch)
