"""Inhibition through the tick: a late source's freshness check (`inhibits = True`) and three checks
over the same Parquet source fail in one run: one Slack root (the freshness incident) listing the
three in its thread, one PagerDuty trigger. Once the source arrives and one of the three still
fails, that one notifies on its own. Real Spark, Slack and PagerDuty stand-ins on loopback,
SQLite and PostgreSQL."""

from __future__ import annotations

import datetime as dt

import pytest
import sqlalchemy as sa
from pyspark.sql import functions as F

from alerting import EscalationPolicy
from alerting.tables import incidents
from checkers import AlertLevel, CheckOutcome, FixedLevel, PredicateSingleDatasetChecker, Status
from checkers.parsers import ParquetParser
from checks import QualityCheck
from scheduling.runner import run_checks
from scheduling.schema import project_database
from scheduling.settings import Settings
from tests.scheduling.databases import fresh_database

T0 = dt.datetime(2026, 11, 22, 7, 0, tzinfo=dt.UTC)
TODAY = 2
KINDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
LAKE = {"path": ""}  # the test's Parquet directory, read when a check runs


def flights_path() -> str:
    return LAKE["path"]


FLIGHTS = ParquetParser(flights_path, schema="day int, carrier string, amount int")


def today_holds(data, condition):
    """One row: whether today's rows hold `condition` (False when there are none)."""
    today = data.where(F.col("day") == TODAY)
    return today.agg(F.coalesce(condition, F.lit(False)).alias("ok"))


class _OverFlights(QualityCheck, register=False):
    abstract = True
    parser = FLIGHTS
    owner = "flights-team"
    alert_level = FixedLevel(AlertLevel.ERROR)


class FlightsFresh(_OverFlights, register=False):
    name = "inhibit_flights_fresh"
    inhibits = True

    def checker(self, data):
        return PredicateSingleDatasetChecker(today_holds(data, F.count("*") > 0), "ok")


class FlightsCarriers(_OverFlights, register=False):
    name = "inhibit_flights_carriers"

    def checker(self, data):
        counted = F.count(F.col("carrier")) > 0
        return PredicateSingleDatasetChecker(today_holds(data, counted), "ok")


class FlightsAmounts(_OverFlights, register=False):
    name = "inhibit_flights_amounts"

    def checker(self, data):
        return PredicateSingleDatasetChecker(today_holds(data, F.min("amount") > 0), "ok")


class FlightsVolume(_OverFlights, register=False):
    name = "inhibit_flights_volume"

    def checker(self, data):
        return PredicateSingleDatasetChecker(today_holds(data, F.count("*") >= 2), "ok")


CHECKS = [FlightsCarriers, FlightsFresh, FlightsAmounts, FlightsVolume]
EXPLAINED = ["inhibit_flights_amounts", "inhibit_flights_carriers", "inhibit_flights_volume"]


@pytest.fixture(params=KINDS)
def settings(request, tmp_path, receivers):
    with fresh_database(request.param, tmp_path) as url:
        engine = project_database(url)
        policy = EscalationPolicy(
            routes={"slack": AlertLevel.WARNING, "pagerduty": AlertLevel.ERROR}, repeat_every=None
        )
        chosen = {name: receivers[name] for name in ("slack", "pagerduty")}
        yield Settings(engine, chosen, policy, state_dir=tmp_path / "state")
        engine.dispose()


def write_flights(spark, tmp_path, rows):
    path = tmp_path / "lake" / f"flights_{len(list(tmp_path.glob('lake/*')))}"
    spark.createDataFrame(rows, "day int, carrier string, amount int").write.parquet(str(path))
    LAKE["path"] = str(path)


def test_a_late_source_notifies_once_and_lists_what_it_explains(
    settings, spark, tmp_path, slack, pagerduty
):
    write_flights(spark, tmp_path, [(1, "AA", 10), (1, "UA", 12)])  # today's day is late
    late = run_checks(CHECKS, now=T0, settings=settings, spark=spark)
    assert [o.status for o in late.outcomes] == [Status.FAILED] * 4
    assert [o.check for o in late.outcomes] == [c.name for c in CHECKS]  # the run's order

    [root] = slack.roots()
    assert "inhibit_flights_fresh" in root.text
    lines = [reply.text for reply in slack.replies(root)]
    assert len(lines) == 3
    assert all("Also failing, probably because" in line for line in lines)
    assert sorted(name for name in EXPLAINED for line in lines if name in line) == EXPLAINED
    flights_dir = LAKE["path"].rsplit("/", 1)[-1]
    assert all(f"because {flights_dir} is late" in line for line in lines)
    assert [e["event_action"] for e in pagerduty.events] == ["trigger"]
    assert pagerduty.events[0]["payload"]["component"] == "inhibit_flights_fresh"

    # the source arrives; amounts are still wrong: that check now notifies on its own
    write_flights(spark, tmp_path, [(1, "AA", 10), (2, "AA", 11), (2, "UA", -5)])
    arrived = run_checks(CHECKS, now=T0 + dt.timedelta(hours=1), settings=settings, spark=spark)
    statuses = {o.check: o.status for o in arrived.outcomes}
    assert statuses == {
        "inhibit_flights_carriers": Status.PASSED,
        "inhibit_flights_fresh": Status.PASSED,
        "inhibit_flights_amounts": Status.FAILED,
        "inhibit_flights_volume": Status.PASSED,
    }
    roots = slack.roots()
    assert [r.text.split(": ")[1] for r in roots] == [
        "inhibit_flights_fresh",
        "inhibit_flights_amounts",
    ]
    assert "Resolved" in slack.replies(roots[0])[-1].text
    assert slack.replies(roots[1]) == []
    # PagerDuty takes several events at once (its dedup_key makes that safe), so the two
    # incidents' events may arrive in either order; each incident's own events are in order
    # (the urgency order of claims is tested in tests/alerting/test_outbox.py)
    by_key: dict[str, list[str]] = {}
    for event in pagerduty.events:
        by_key.setdefault(event["dedup_key"], []).append(event["event_action"])
    fresh_key = pagerduty.events[0]["dedup_key"]
    [(amounts_key, amounts_page)] = [
        (e["dedup_key"], e) for e in pagerduty.events[1:] if e["event_action"] == "trigger"
    ]
    assert amounts_page["payload"]["component"] == "inhibit_flights_amounts"
    assert by_key == {fresh_key: ["trigger", "resolve"], amounts_key: ["trigger"]}


def test_a_replayed_outcome_of_an_inhibited_check_is_inhibited(tmp_path):
    """An outage spooled the late source's failures; the next tick replays them through the
    record stage's path: the inhibited checks' alerts are held back and listed in the
    inhibitor's thread, as a live run would have recorded them."""
    from alerting.tables import notifications
    from scheduling.spool import Spool, SpoolEntry
    from scheduling.tick.pipeline import TickRequest, TickState, policies
    from scheduling.tick.pipeline import replay_spool as replay_stage

    LAKE["path"] = str(tmp_path / "lake" / "flights")
    engine = project_database(f"sqlite:///{tmp_path / 'dq.db'}")
    policy = EscalationPolicy(routes={"slack": AlertLevel.WARNING}, repeat_every=None)
    settings = Settings(engine, {}, policy, state_dir=tmp_path, spool_dir=tmp_path / "spool")
    spool = Spool(settings.spool_dir)
    for check in [FlightsFresh, FlightsAmounts, FlightsVolume]:  # the record stage's order
        failed = CheckOutcome(check.name, Status.FAILED, AlertLevel.ERROR, failing=1, total=1)
        spool.append(SpoolEntry(check.name, failed, T0))

    request = TickRequest(T0 + dt.timedelta(hours=1), checks=CHECKS)
    replay_stage(TickState(request, settings, policies(settings, CHECKS)))

    assert not spool.pending()
    with engine.connect() as connection:
        rows = connection.execute(
            sa.select(
                incidents.c.check_name,
                notifications.c.reason,
                notifications.c.status,
                notifications.c.last_error,
            )
            .join(incidents, incidents.c.id == notifications.c.incident_id)
            .order_by(notifications.c.id)
        ).all()
    told = [(check, reason, status) for check, reason, status, _ in rows]
    assert told == [
        ("inhibit_flights_fresh", "new", "pending"),
        ("inhibit_flights_fresh", "also_failing", "pending"),
        ("inhibit_flights_amounts", "new", "suppressed"),
        ("inhibit_flights_fresh", "also_failing", "pending"),
        ("inhibit_flights_volume", "new", "suppressed"),
    ]
    assert all(error.startswith("inhibited: ") for *_, s, error in rows if s == "suppressed")
    engine.dispose()
