"""Short full garbage collections in a serving process.

Python's cyclic collector walks every object it tracks on a full (oldest generation)
collection. Once an app process has started, most of those objects live as long as it does:
the app, its routes and models, the reference tables, the clients. Measured in one API worker
on the 1M month, a full collection took 45-99 ms, and every one of them stalled the requests in
flight, enough for the adaptive search limit to shed searches (`docs/api.md`). `frozen` moves
what is alive at the end of startup out of the collector's sight (`gc.freeze`), so a full
collection walks only what was created since, and gives it back at shutdown (`gc.unfreeze`),
so a process that starts several apps (the tests) can still collect what they leave behind.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def frozen() -> Iterator[None]:
    """The objects alive now, garbage collected first, left out of collections until exit."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
