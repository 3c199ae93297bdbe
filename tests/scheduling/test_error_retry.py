"""The in-process retry of an ERROR (scheduling/tick/retry.py), on local Spark and SQLite: a
source that failed to load is read once more; an expression over a column the data
lacks is not evaluated again (its definition decides); an open incident is not retried; the
delay counts from when the error was seen."""

from __future__ import annotations

import datetime as dt

import pytest

from checkers import Status
from scheduling.runner import run_checks
from scheduling.settings import Settings
from scheduling.tick import pipeline
from tests.scheduling.retry_checks import RetryMissingFile, RetryNoSuchColumn

NOW = dt.datetime(2026, 11, 22, 7, 0, tzinfo=dt.UTC)
CHECKS = [RetryNoSuchColumn, RetryMissingFile]


@pytest.fixture
def settings(tmp_path, monkeypatch):
    csv = tmp_path / "numbers.csv"
    csv.write_text("n\n1\n2\n")
    monkeypatch.setenv("DQ_RETRY_CSV", str(csv))
    monkeypatch.setenv("DQ_DATABASE_URL", f"sqlite:///{tmp_path / 'dq.db'}")
    monkeypatch.setenv("DQ_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("DQ_CONFIG", str(tmp_path / "none.toml"))
    chosen = Settings.from_environment()
    yield chosen
    chosen.engine.dispose()


def _attempts(report) -> dict[str, tuple[Status, int]]:
    return {o.check: (o.status, o.attempts) for o in report.outcomes}


def test_a_failed_load_is_retried_and_a_definition_error_is_not(spark, settings, monkeypatch):
    waits: list[float] = []
    computed = pipeline.wait_s

    def wait_s(*args):  # the retry's delay, as computed
        waits.append(computed(*args))
        return waits[-1]

    monkeypatch.setattr(pipeline, "wait_s", wait_s)
    first = run_checks(CHECKS, now=NOW, settings=settings, spark=spark, retry_after_s=1.0)
    assert _attempts(first) == {
        "retry_no_such_column": (Status.ERROR, 1),  # read once: the column is still missing
        "retry_missing_file": (Status.ERROR, 2),  # read again
    }
    assert "no_such_column" in str(first.outcomes[0].error)
    # the engine's pass ran after the failed loads: that time counts towards the delay
    assert len(waits) == 1 and 0.0 <= waits[0] < 1.0
    # an hour later the missing file's incident is open: not retried again
    later = run_checks(
        CHECKS,
        now=NOW + dt.timedelta(hours=1),
        settings=settings,
        spark=spark,
        retry_after_s=0.0,
    )
    assert _attempts(later) == {
        "retry_no_such_column": (Status.ERROR, 1),
        "retry_missing_file": (Status.ERROR, 1),
    }
