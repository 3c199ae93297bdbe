"""An ERROR outcome (the check could not be evaluated: a flaky read, a source late by seconds)
is evaluated once more in the same tick, after a short delay, before it is recorded: under
Airflow that costs no second Spark application and no task retry delay. A check whose last
recorded outcome was already ERROR is not retried: its incident is open, and a retry every
tick would only repeat the same failure (at most one retry per incident)."""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from alerting.tables import runs
from checkers.outcome import CheckOutcome, Status
from checks import QualityCheck

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
