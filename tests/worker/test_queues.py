"""Which queues a worker takes: the shared ones, and its own alias's release checks and lots."""

from __future__ import annotations

import pytest

from app.monitoring import releases
from app.worker.queue import queue

CHANNEL_PREFIX = "procrastinate_queue_v1#"
"""What the queue's notification channel is named after: the queue's name follows."""
MAX_CHANNEL = 63
"""PostgreSQL's longest identifier, and so the longest notification channel, in bytes."""


def test_every_task_runs_on_a_queue_every_worker_takes() -> None:
    """A task on a queue no worker listens to would wait forever; only the release checks
    have a queue per alias."""
    for name, task in queue.tasks.items():
        assert task.queue in releases.SHARED_QUEUES, (name, task.queue)


@pytest.mark.parametrize("alias", ["empresas", "bench-10000000", "a" * 100, "x.y_z-" * 16])
def test_release_queue_of_an_alias_is_its_own_and_fits_a_channel(alias: str) -> None:
    own = releases.queue_of(alias)
    assert len((CHANNEL_PREFIX + own).encode()) <= MAX_CHANNEL
    assert own not in releases.SHARED_QUEUES
    assert own != releases.queue_of(alias + "2")
    assert own != releases.queue_of(alias[:-1] + "_")
    lots = releases.queue_of(alias, "lotes")
    assert len((CHANNEL_PREFIX + lots).encode()) <= MAX_CHANNEL
    assert lots not in (*releases.SHARED_QUEUES, own)
    assert releases.queues_of(alias) == [*releases.SHARED_QUEUES, own, lots]
