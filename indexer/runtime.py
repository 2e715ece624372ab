"""Process settings of the indexer's worker processes."""

from __future__ import annotations

import gc

GEN0_THRESHOLD = 50_000


def relax_gc() -> None:
    """Run the cyclic garbage collector rarely, and never over what is alive already.

    Workers allocate millions of short-lived objects (rows, documents) that reference counting
    frees on its own: none of them forms a cycle. With the default thresholds the collector
    scans every tracked object over and over, which doubled the cost of building a document.
    Objects alive at this point (modules, reference tables) are frozen out of the scans;
    cycles made later by libraries are still collected, only less often.
    """
    gc.freeze()
    gc.set_threshold(GEN0_THRESHOLD, 20, 100)
