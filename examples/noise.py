"""Notifications of the demo's replay per receiver, against those the same outcomes send with
inhibition and grouping switched off (issue 26's "before"): every recorded run is recorded again,
in order and at its window's end, into a scratch database through the tick's recording with both
off. Evaluation does not depend on alerting, so this is what a replay with both off records,
without its Spark work. Which seeded problems reached a person, by either way."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from alerting.model import Notification, NotifyReason
from alerting.tables import incidents, notifications, runs
from checkers.outcome import CheckOutcome
from checkers.project_db import as_utc
from checks import registered
from scheduling.schema import project_database
from scheduling.settings import Settings
from scheduling.tick.record import record_in

#: The demo's seeded problems and the checks that find them (examples/demo.py).
SEEDED: Mapping[str, tuple[str, ...]] = {
    "airports": ("flight_destinations_known",),
    "planes": ("flight_planes_known",),
    "storms": ("yesterdays_flights_have_times",),
    "holiday volumes": ("flights_daily_volume",),
    "the missing weather day": ("operational_tables_fresh",),
    "the lost flights": ("ops_and_lake_daily_totals", "ops_and_lake_flights_match"),
}
#: Outbox rows no receiver gets on their own: held back by an inhibitor, listed on a group's root.
NOT_SENT = ("suppressed", "grouped")


def notifications_per_receiver(engine: Engine) -> Counter[str]:
    """Messages each receiver got (or is to get): outbox rows sent on their own."""
    with engine.connect() as connection:
        rows = connection.execute(
            sa.select(notifications.c.receiver, sa.func.count())
            .where(notifications.c.status.not_in(NOT_SENT))
            .group_by(notifications.c.receiver)
        )
        return Counter({str(receiver): int(n) for receiver, n in rows})


def told_checks(engine: Engine) -> set[str]:
    """Checks whose failures reached a receiver: in a message of their own, listed on a group's
    root, or named in an inhibitor's thread ("also failing...")."""
    with engine.connect() as connection:
        rows = connection.execute(
            sa.select(incidents.c.check_name, notifications.c.reason, notifications.c.payload)
            .join(incidents, incidents.c.id == notifications.c.incident_id)
            .where(notifications.c.status != "suppressed")
        ).all()
    told = set()
    for check, reason, payload in rows:
        if reason != NotifyReason.ALSO_FAILING.value:
            told.add(str(check))
            continue
        note = Notification.from_json(payload).note  # "...is late: <check> (<LEVEL>)"
        told.add(note.rsplit(": ", 1)[-1].split(" (")[0])
    return told


def seeded_told(engine: Engine) -> dict[str, bool]:
    """Each seeded problem: whether one of its checks reached a receiver."""
    told = told_checks(engine)
    return {problem: any(c in told for c in checks) for problem, checks in SEEDED.items()}


def recorded_without_noise_reduction(settings: Settings, scratch: Path) -> Engine:
    """The runs `settings.engine` recorded, recorded again into a new database at `scratch` with
    inhibition and grouping off; returns its engine."""
    scratch.unlink(missing_ok=True)
    engine = project_database(f"sqlite:///{scratch}")
    off = dataclasses.replace(settings, engine=engine, inhibition=False, grouping=False)
    with settings.engine.connect() as connection:
        recorded = connection.execute(sa.select(runs).order_by(runs.c.id)).mappings().all()
    for row in recorded:
        outcome = CheckOutcome.from_json(row["outcome"])
        start, end = as_utc(row["window_start"]), as_utc(row["window_end"])
        window = (start, end) if start and end else None
        now = end or as_utc(row["finished_at"])
        assert now is not None  # every run row has its end
        policy = settings.policy_for(registered().get(outcome.check))
        with engine.begin() as connection:
            record_in(
                connection,
                off,
                outcome,
                policy,
                now,
                window=window,
                links={},
                inhibit_rule=None,
                source=None,
            )
    return engine
