"""An ERROR outcome (the check could not be evaluated: a flaky read, a source late by seconds)
is evaluated once more in the same tick, after a short delay, before it is recorded: under
Airflow that costs no second Spark application and no task retry delay. Not retried: a check
whose last recorded outcome was already ERROR (its incident is open, and a retry every tick would
only repeat the same failure: at most one retry per incident), and one whose definition decides
its ERROR (a retry would read its source again to find the same mistake)."""

from __future__ import annotations

import time
from collections.abc import Collection, Sequence

import sqlalchemy as sa
from pyspark.errors import AnalysisException
from sqlalchemy.engine import Connection

from alerting.tables import runs
from checkers.checker import CONFIGURATION_ERROR
from checkers.metrics.runner import unresolved
from checkers.outcome import CheckOutcome, Status
from checks import QualityCheck
from scheduling.tick.evaluate import Evaluation, Pending

#: Seconds an Airflow tick waits before evaluating its ERROR checks again (DQ_ERROR_RETRY_DELAY_S)
DEFAULT_RETRY_DELAY_S = 1.0


def last_statuses(connection: Connection, names: Sequence[str]) -> dict[str, str]:
    """Each named check's last recorded status (absent when it never ran)."""
    if not names:
        return {}
    latest = (
        sa.select(runs.c.check_name, sa.func.max(runs.c.id).label("id"))
        .where(runs.c.check_name.in_(list(names)))
        .group_by(runs.c.check_name)
        .subquery()
    )
    query = sa.select(runs.c.check_name, runs.c.status).join(latest, runs.c.id == latest.c.id)
    return {name: status for name, status in connection.execute(query)}


def to_retry(
    checks: Sequence[type[QualityCheck]],
    outcomes: Sequence[CheckOutcome],
    last: dict[str, str],
) -> list[type[QualityCheck]]:
    """The checks whose ERROR opens an incident now (their last outcome was no ERROR)."""
    return [
        check
        for check, outcome in zip(checks, outcomes, strict=True)
        if outcome.status is Status.ERROR and last.get(check.name) != Status.ERROR.value
    ]


def decided_by_definition(evaluation: Evaluation, names: Collection[str]) -> set[str]:
    """Those of `names` whose ERROR their check's definition decides, whatever the sources hold:
    its sources or checker could not be built, its configuration was refused, or an expression
    does not resolve on the data that loaded (Spark analyses it; no job runs). Evaluated again,
    they would fail the same way until someone changes the check."""
    return {
        item.check.name
        for item in evaluation.items
        if item.check.name in names and _by_definition(item, evaluation)
    }


def _by_definition(item: Pending, evaluation: Evaluation) -> bool:
    if item.by_definition:
        return True
    result, checker = item.result, item.checker
    if result is None or result.error is None or checker is None or item.partitions is not None:
        return False  # a source that did not load, or an incremental check's stored states
    if any(parser in evaluation.malformed for parser in item.sources.values()):
        return False  # the data's fault, which a rewrite of the file can mend
    if result.error.startswith(CONFIGURATION_ERROR):
        return True
    try:  # planning reads no rows: Spark only analyses the check's expressions
        planned = checker.plan(item.check.tolerance.known_broken() if item.check.tolerance else ())
    except AnalysisException:
        return True
    except Exception:
        return False
    return planned.frame is not None and bool(unresolved(planned.frame, planned.analyzers))


def wait_s(evaluation: Evaluation, names: Collection[str], delay_s: float) -> float:
    """What is left of `delay_s` since the last of these checks' errors was seen (its source's
    failed load, else the end of the engine's run): the time the other checks took meanwhile
    counts towards the delay."""
    seen = max(_seen_at(i, evaluation) for i in evaluation.items if i.check.name in names)
    return max(0.0, delay_s - (time.monotonic() - seen))


def _seen_at(item: Pending, evaluation: Evaluation) -> float:
    failed = [
        loaded.finished
        for parser in item.sources.values()
        if (loaded := evaluation.loaded.get(parser)) is not None and loaded.error is not None
    ]
    if item.result is None and failed:
        return max(failed)
    return evaluation.ran_at if evaluation.ran_at is not None else time.monotonic()
