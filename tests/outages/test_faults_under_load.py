"""The short version of `scripts/faults.py`: under lookups, searches, agent tool calls and
validations, Elasticsearch, Redis and PostgreSQL are killed (SIGKILL) and restarted one at a
time, the worker is killed mid-delivery, and the app is stopped with SIGTERM. Each dependency's
outage answers what needs it with a JSON 503 and `Retry-After`, serves what does not, shows in
`/v1/status`, and ends within 5 s of its return without restarting the app; every answered
request has its audit row, every monitor its event, every lot its file; the requests in flight
at the SIGTERM are answered. Figures of the long run: docs/resilience.md."""

from __future__ import annotations

import pytest

from scripts.faults import Options, Report, run

RECOVERY = 5.0


@pytest.fixture(scope="module")
def report() -> Report:
    return run(Options(rate=20, monitors=300, down=4, settle=2))


def _kinds(report: Report, phase: str) -> dict[str, dict[str, int]]:
    return report.phases[phase].outcomes


def test_no_request_fails_and_every_refusal_says_when_to_come_back(report: Report) -> None:
    assert report.failed_requests == 0, report.phases
    for name, phase in report.phases.items():
        assert phase.max_503_ms < 3000, name  # bounded by the 2 s dependency timeout


def test_elasticsearch_down_refuses_searches_only(report: Report) -> None:
    down = _kinds(report, "elasticsearch down")
    assert set(down["search"]) <= {"503", "200"}
    assert down["search"].get("503", 0) > 0
    for kind in ("lookup", "tool", "validate"):
        assert set(down[kind]) == {"200"}, (kind, down[kind])


def test_redis_down_refuses_every_keyed_call(report: Report) -> None:
    """The rate limiter fails closed: no window, no call."""
    down = _kinds(report, "redis down")
    for kind in ("lookup", "search", "tool", "validate"):
        assert set(down[kind]) == {"503"}, (kind, down[kind])


def test_postgresql_down_serves_known_keys(report: Report) -> None:
    down = _kinds(report, "postgresql down")
    for kind in ("lookup", "search", "tool", "validate"):
        assert set(down[kind]) == {"200"}, (kind, down[kind])


def test_each_outage_shows_in_status_and_ends_within_seconds_of_return(report: Report) -> None:
    assert [fault.name for fault in report.faults] == ["elasticsearch", "redis", "postgresql"]
    for fault in report.faults:
        assert fault.seconds_to_status_down is not None, fault
        assert fault.seconds_to_service is not None, fault
        assert fault.seconds_to_service <= RECOVERY, fault
    for name in ("elasticsearch back", "redis back", "release, worker killed", "worker back",
                 "postgresql back", "deliveries finish"):  # fmt: skip
        for kind, counts in _kinds(report, name).items():
            assert set(counts) == {"200"}, (name, kind, counts)


def test_nothing_accepted_is_lost(report: Report) -> None:
    assert report.audit_rows == report.answered_by_app
    assert report.deliveries_unique == report.monitors
    assert report.bad_signatures == 0
    assert report.lots_done == report.lots_asked == 3


def test_sigterm_answers_requests_in_flight(report: Report) -> None:
    answered, started = report.in_flight_at_stop_answered.split(" of ")
    assert int(started) > 0
    assert answered == started
