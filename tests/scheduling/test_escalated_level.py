"""One level everywhere: an incident escalated by its policy (`escalate_after_runs`) shows the
same effective level in `RunReport.escalated`, in `dq_incidents.effective_level` and in the
notification its receivers get; migration 8 adds the column to an older database."""

from __future__ import annotations

import datetime as dt
import json

import pytest
import sqlalchemy as sa

from alerting import EscalationPolicy
from alerting.receivers import FileReceiver
from alerting.tables import incidents, notifications
from checkers import AlertLevel, FixedLevel, PredicateSingleDatasetChecker, Status
from checkers.parsers import CallableParser
from checks import QualityCheck
from scheduling.runner import run_checks
from scheduling.schema import MIGRATIONS, migrate, project_database
from scheduling.settings import Settings
from tests.scheduling.databases import KINDS, fresh_database

T0 = dt.datetime(2026, 11, 22, 7, 0, tzinfo=dt.UTC)
W, E, C = AlertLevel.WARNING, AlertLevel.ERROR, AlertLevel.CRITICAL


class LateOrders(QualityCheck, register=False):
    name = "late_orders"
    description = "Orders ship within two days."
    parser = CallableParser(
        lambda spark: spark.createDataFrame([(1, 1), (2, 5), (3, 9)], "id int, days int"),
        name="orders",
    )
    alert_level = FixedLevel(AlertLevel.WARNING)
    escalation = EscalationPolicy(routes={"file": W}, escalate_after_runs=1, repeat_every=None)

    def checker(self, orders):
        return PredicateSingleDatasetChecker(orders, "days <= 2", key="id")


def _incident_levels(engine) -> list[tuple[int, int | None]]:
    with engine.connect() as connection:
        rows = connection.execute(
            sa.select(incidents.c.level, incidents.c.effective_level).order_by(incidents.c.id)
        )
        return [tuple(r) for r in rows]


@pytest.mark.parametrize("kind", KINDS)
def test_the_escalated_level_is_the_same_in_the_report_the_incident_and_the_alert(
    spark, tmp_path, kind
):
    alerts = tmp_path / "alerts.jsonl"
    with fresh_database(kind, tmp_path) as url:
        engine = project_database(url)
        try:
            settings = Settings(
                engine, {"file": FileReceiver("file", alerts)}, EscalationPolicy(routes={})
            )
            seen = []
            for run in range(3):  # each further failing run: one level up, up to CRITICAL
                now = T0 + dt.timedelta(hours=run)
                report = run_checks([LateOrders], now=now, settings=settings, spark=spark)
                [outcome] = report.outcomes
                assert (outcome.status, outcome.level) == (Status.FAILED, W)  # the run's own
                told = json.loads(alerts.read_text().splitlines()[-1])
                with engine.connect() as connection:
                    stored = connection.execute(
                        sa.select(notifications.c.level).order_by(notifications.c.id.desc())
                    ).first()
                seen.append(
                    (
                        report.escalated["late_orders"],
                        AlertLevel(_incident_levels(engine)[-1][1]),
                        AlertLevel[told["level"]],
                        AlertLevel(stored.level),
                    )
                )
            assert seen == [(W,) * 4, (E,) * 4, (C,) * 4]
            assert told["headline"].startswith("Escalated to CRITICAL: 2 of 3 elements failing")
            assert _incident_levels(engine) == [(int(W), int(C))]  # the run's level, the decided

            later = T0 + dt.timedelta(hours=4)
            report = run_checks([OrdersShipped], now=later, settings=settings, spark=spark)
            assert report.outcomes[0].status is Status.PASSED
            assert report.escalated == {}  # resolved: no open incident
            assert _incident_levels(engine) == [(int(W), int(C))]  # the last level decided
        finally:
            engine.dispose()


class OrdersShipped(LateOrders, register=False):
    """The same check, fixed: it passes."""

    name = "late_orders"

    def checker(self, orders):
        return PredicateSingleDatasetChecker(orders, "days >= 0", key="id")


@pytest.mark.parametrize("kind", KINDS)
def test_migration_8_adds_the_effective_level_to_an_older_database(kind, tmp_path, monkeypatch):
    from alerting.pipeline import open_incident_levels

    with fresh_database(kind, tmp_path) as url:
        engine = sa.create_engine(url)
        try:
            monkeypatch.setattr("scheduling.schema.MIGRATIONS", MIGRATIONS[:7])
            assert migrate(engine) == 7
            with engine.begin() as connection:  # the table as version 7 left it
                connection.exec_driver_sql("ALTER TABLE dq_incidents DROP COLUMN effective_level")
                connection.exec_driver_sql(
                    "INSERT INTO dq_incidents (fingerprint, check_name, scope, status, level,"
                    " peak_level, failing_runs, opened_at, updated_at, last_outcome)"
                    " VALUES ('a', 'c', '', 'open', 2, 2, 1, '2026-11-22 06:00:00',"
                    " '2026-11-22 06:00:00', '{}')"
                )
            monkeypatch.undo()
            assert migrate(engine) == MIGRATIONS[-1][0]  # 8 and every later migration
            assert _incident_levels(engine) == [(2, None)]  # recorded before: no level decided
            with engine.connect() as connection:
                assert open_incident_levels(connection, ["c", "other"]) == {"c": AlertLevel(2)}
        finally:
            engine.dispose()
