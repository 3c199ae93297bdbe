"""A project database with three checks' histories for the report tests: one that fails now and
then (an escalated incident, a failing sample, a failing-rows link), one that always passes, and
one that could not run. Names, owners, tags, descriptions, samples, keys and errors carry a
hostile value that must never execute."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from alerting import EscalationPolicy, FailingRowsLog, handle_outcome
from checkers import AlertLevel, CheckOutcome, FailingElementsThresholds, Status
from checkers.levels import level_reason
from scheduling.report import write_report
from scheduling.schema import project_database

T0 = dt.datetime(2013, 12, 9, 7, 0, tzinfo=dt.UTC)
HOSTILE = "<script>document.title='pwned'</script><img src=x onerror=alert(1)>"
FLIGHTS = [(960, 5), (955, 6), (970, 4), (962, 7), (958, 5), (943, 204), (954, 11), (968, 5)]
FLIGHTS += [(951, 40), (949, 31)]  # day 5 an outlier; failing 5-6, then again 8-9
LEVELS = FailingElementsThresholds(warning=10, error=1000)


def _flights(day: int, flights: int, failing: int) -> CheckOutcome:
    status = Status.FAILED if failing > 10 else Status.PASSED
    return CheckOutcome(
        check="flights_have_times",
        status=status,
        level=AlertLevel.ERROR if status is Status.FAILED else AlertLevel.OK,
        level_reason=level_reason(LEVELS, failing, flights) if status is Status.FAILED else "",
        failing=failing,
        total=flights,
        unexcused=failing,
        description=HOSTILE,
        metrics={"failing": failing, "rows": flights},
        reading={"rows_read": flights // 8, "partitions_read": 1, "partitions": day + 1},
        failing_keys=(HOSTILE,) if failing else (),
        failing_keys_distinct=failing if failing else None,
        sample=(
            {"flight": 1545 + day, "tailnum": HOSTILE, "dep_time": None},
            {"flight": 1714, "tailnum": "N24211", "dep_time": None, HOSTILE: [1, "<b>"]},
        )
        if status is Status.FAILED
        else (),
        started_at=T0 + dt.timedelta(days=day),
        owner="flights-team",
        tags=("flights", "daily"),
    )


def _weather(day: int) -> CheckOutcome:
    return CheckOutcome(
        check="weather_complete",
        status=Status.PASSED,
        total=24 * 3,
        description="Every hour of every origin has a weather reading.",
        metrics={"hours": 72 - day % 3},
        reading={"rows_read": 72},
        started_at=T0 + dt.timedelta(days=day),
        owner="weather-team",
        tags=("weather", "daily"),
    )


def _hostile(day: int) -> CheckOutcome:
    return CheckOutcome(
        check=f"planes_known{HOSTILE}",
        status=Status.ERROR,
        level=AlertLevel.ERROR,
        error=f"table planes is missing {HOSTILE}",
        description="Every tail number is in planes.",
        started_at=T0 + dt.timedelta(days=day),
        owner=HOSTILE,
        tags=(HOSTILE,),
    )


def build(directory: Path) -> Path:
    """The database's runs and incidents, and the report written from them."""
    engine = project_database(f"sqlite:///{directory / 'dq.db'}")
    policy = EscalationPolicy(routes={"console": AlertLevel.WARNING}, escalate_after_runs=1)
    rows = FailingRowsLog(directory / "state" / "failing")
    for day, (flights, failing) in enumerate(FLIGHTS):
        now = T0 + dt.timedelta(days=day)
        outcome = _flights(day, flights, failing)
        link = rows.write(outcome, now)
        links = {"failing rows": link} if link else {}
        handle_outcome(engine, outcome, policy, now, links=links)
        handle_outcome(engine, _weather(day), policy, now)
        if day >= 6:
            handle_outcome(engine, _hostile(day), policy, now)
    end = T0 + dt.timedelta(days=len(FLIGHTS))
    return write_report(engine, directory / "site" / "report.html", now=end)
