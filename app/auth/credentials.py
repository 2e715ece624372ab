"""A per-process cache of API key credentials, so an authenticated request does not cross to
PostgreSQL: the key's hash, account, role, plan, limit, allowlist and revocation, by key id.

A change that matters (a revocation, a new allowlist, an admin key replaced) bumps an epoch kept
in Redis, and every request already reads that epoch in the same round trip as its rate-limit
window (`app.ratelimit.limiter`): a process that sees a new epoch empties its cache and checks
again in PostgreSQL the credential the request was admitted with, so a revoked key is refused
by every process on its next request, with no extra round trip for anyone else. An entry is
stored only if no change was seen while it was read, and lives at most `TTL` seconds (the bound
for a change made behind the app's back, by SQL). The cache holds at most `SIZE` keys.

While PostgreSQL cannot be read, an entry past its `TTL` still answers for up to `STALE_TTL`
seconds (`stale`): keys that were working keep working through a database outage. Nothing is
lost by it: a key cannot be revoked or changed while the database is away, and a change made
before the outage bumped the epoch, which empties the cache, stale entries included.
"""

from __future__ import annotations

import time

from app.accounts.repository import Credencial

TTL = 30.0
STALE_TTL = 600.0
SIZE = 10_000


class CredentialCache:
    def __init__(self, ttl: float = TTL, size: int = SIZE, stale_ttl: float = STALE_TTL) -> None:
        self.ttl = ttl
        self.size = size
        self.stale_ttl = stale_ttl
        self.epoch: int | None = None
        """The last epoch seen (None before the first request's window)."""
        self._entries: dict[str, tuple[Credencial, float]] = {}

    def get(self, key_id: str) -> Credencial | None:
        found = self._entries.get(key_id)
        if found is None:
            return None
        credential, stored_at = found
        age = time.monotonic() - stored_at
        if age > self.ttl:
            if age > self.stale_ttl:
                del self._entries[key_id]
            return None
        return credential

    def stale(self, key_id: str) -> Credencial | None:
        """The entry of `key_id` even past its `TTL` (up to `stale_ttl`): the answer while the
        database cannot be read."""
        found = self._entries.get(key_id)
        if found is None or time.monotonic() - found[1] > self.stale_ttl:
            return None
        return found[0]

    def put(self, key_id: str, credential: Credencial, epoch: int | None) -> None:
        """Keeps `credential`, read while the epoch was `epoch`, unless a change was seen
        since (then it may be stale)."""
        if epoch != self.epoch or self.epoch is None:
            return
        if len(self._entries) >= self.size:
            self._entries.pop(next(iter(self._entries)))
        self._entries[key_id] = (credential, time.monotonic())

    def observe(self, epoch: int) -> bool:
        """Takes the epoch a window check returned; True (and the cache emptied) when it
        differs from the last one seen."""
        if epoch == self.epoch:
            return False
        changed = self.epoch is not None
        self.epoch = epoch
        self._entries.clear()
        return changed

    def forget(self) -> None:
        """Empties the cache (the epoch could not be read: Redis away)."""
        self.epoch = None
        self._entries.clear()
