"""The retry schedule of deliveries: the default delays (docs/monitoring.md: eleven retries,
12 attempts over about three days) and the next attempt's time, the schedule's delay with at
most 20 % jitter, or the endpoint's `Retry-After` when it asks for more."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from app.monitoring.service import _next, retry_delays
from app.settings import Settings

DAY = 86400
JITTER = 0.2


def test_default_schedule_is_eleven_retries_over_about_three_days() -> None:
    delays = retry_delays(Settings())
    assert delays == [30, 120, 600, 1800, 3600, 7200, 14400, 28800, 43200, 86400, 86400]
    assert delays == sorted(delays)
    assert 3 * DAY <= sum(delays) <= 3.2 * DAY
    assert sum(delays) * (1 + JITTER) < 4 * DAY, "jitter never stretches it past four days"


def test_schedule_read_from_the_setting_ignores_blanks() -> None:
    assert retry_delays(Settings(webhook_retry_delays=" 0.5, 2 ,,10 ")) == [0.5, 2.0, 10.0]


def _bounds(delay: float, asked: float | None) -> tuple[datetime, datetime, datetime]:
    before = datetime.now(UTC)
    at = _next(delay, asked)
    after = datetime.now(UTC)
    return before, at, after


@given(st.floats(min_value=0.5, max_value=2 * DAY))
def test_next_attempt_is_the_delay_with_at_most_a_fifth_more(delay: float) -> None:
    before, at, after = _bounds(delay, None)
    assert before + timedelta(seconds=delay) <= at
    assert at <= after + timedelta(seconds=delay * (1 + JITTER))


def test_jitter_spreads_attempts_across_the_fifth() -> None:
    """Many events failing at once do not all come back at the same moment."""
    delay = 10_000.0
    offsets = []
    for _ in range(200):
        before, at, _ = _bounds(delay, None)
        offsets.append((at - before).total_seconds() / delay - 1)
    assert min(offsets) < 0.05
    assert max(offsets) > 0.15
    assert len({round(offset, 4) for offset in offsets}) > 150


@given(
    st.floats(min_value=1, max_value=3600),
    st.floats(min_value=0, max_value=DAY),
)
def test_retry_after_wins_only_when_it_asks_for_more(delay: float, asked: float) -> None:
    before, at, after = _bounds(delay, asked)
    low = max(delay, asked)
    high = max(delay * (1 + JITTER), asked)
    assert before + timedelta(seconds=low) <= at <= after + timedelta(seconds=high)
