"""The serving process leaves what its startup built out of the garbage collector's walks."""

from __future__ import annotations

import gc
import weakref

from litestar.testing import TestClient
from procrastinate import PsycopgConnector

from app.core import create_app
from app.lib.heap import frozen
from app.worker.queue import queue


class Node:
    """An object in a reference cycle: only the cyclic collector frees it."""

    def __init__(self) -> None:
        self.me = self


def test_objects_alive_at_the_start_are_left_out_until_the_end() -> None:
    before = Node()
    seen = weakref.ref(before)
    with frozen():
        assert gc.get_freeze_count() > 0
        del before  # garbage now, but frozen: a full collection does not walk it
        gc.collect()
        assert seen() is not None
        after = Node()  # created since: collected as usual
        seen_after = weakref.ref(after)
        del after
        gc.collect()
        assert seen_after() is None
    assert gc.get_freeze_count() == 0
    gc.collect()  # given back at the end: what became garbage meanwhile is freed
    assert seen() is None


def test_the_app_freezes_its_startup_for_its_life() -> None:
    assert gc.get_freeze_count() == 0
    # The job queue is the module's one app: its connector keeps the pool it was opened with,
    # closed by the lifespan's end, so this process's own is a connector of its own.
    with (
        queue.replace_connector(PsycopgConnector()),
        TestClient(create_app(), base_url="http://127.0.0.1") as client,
    ):
        assert client.get("/health").status_code == 200
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0
