"""The short version of `scripts/reindex.py`: a full load and alias swap under lookups,
searches, tool calls and validations fails no request; listings opened before the swap page to
their end on the release they started on; the monitors record each release once and every
event is delivered once; a load killed half-way leaves the live release and the next load
deletes its leftovers. Figures of the long run: docs/resilience.md."""

from __future__ import annotations

import pytest

from scripts.reindex import Options, Report, run


@pytest.fixture(scope="module")
def report() -> Report:
    return run(Options(rate=20, monitors=200, listings=8, settle=2))


def test_no_request_fails_through_the_reindex(report: Report) -> None:
    assert report.failed == 0, report.phases
    assert {"load and swap", "after the swap", "load killed", "next load"} <= set(report.phases)
    for phase in report.phases.values():
        assert phase.sent > 0


def test_listings_opened_before_the_swap_page_to_their_end(report: Report) -> None:
    assert len(report.listings) == 8
    for listing in report.listings:
        assert set(listing.statuses) == {"200"}, listing
        assert listing.pages >= 2
        assert listing.items == listing.unique


def test_monitors_see_each_release_once(report: Report) -> None:
    assert len(report.releases_recorded) == 3  # the first, the swap's, the load after the kill
    assert set(report.releases_recorded.values()) == {1}
    assert report.deliveries_unique == report.deliveries_received == 2 * report.monitors


def test_killed_load_leaves_live_release_and_next_load_cleans_up(report: Report) -> None:
    assert report.live_unchanged_after_kill
    assert len(report.left_by_killed_load) == 1
    assert report.cleaned_up_by_next_load == report.left_by_killed_load
    assert report.whole
