"""Acceptance: hanging, trickling and silent sources (HTTP, PostgreSQL, MariaDB) beside healthy
ones (CSV, Parquet, in-memory, HTTP) in one run. Each slow source is an ERROR at its deadline, the
healthy checks pass, and the run's wall time is bounded by the deadline, not by the delays."""

from __future__ import annotations

import pytest

from checkers import Status
from tests.checks.slow_tick import DEADLINE_S, DELAYS_S, slow_env, slow_sources_tick

# Waits for five sources' deadlines by design. `make test-fast` skips it.
pytestmark = pytest.mark.slow


@pytest.mark.postgres
@pytest.mark.mariadb
def test_slow_sources_time_out_while_healthy_checks_pass(spark, tmp_path, monkeypatch):
    for name, value in slow_env(tmp_path).items():
        monkeypatch.setenv(name, value)
    tick = slow_sources_tick(tmp_path)
    assert tick.settings.source_deadline_s == DEADLINE_S and tick.settings.load_parallelism == 10

    outcomes = {o.check: o for o in tick.report.outcomes}
    for name, parser in tick.slow.items():
        outcome = outcomes[name]
        assert outcome.status is Status.ERROR, (name, outcome.error)
        assert outcome.error.startswith(f"{parser.describe()} timed out after 2 s"), outcome.error
        assert DEADLINE_S <= outcome.timings["load_s"] < DEADLINE_S + 5
    for name in tick.healthy:
        assert outcomes[name].status is Status.PASSED, (name, outcomes[name].error)
    # One after another the slow sources took minutes (the trickle alone ~4, the silent server
    # forever); together the tick takes about one deadline plus the healthy checks' Spark work.
    assert tick.took < DELAYS_S / 4, tick.took
