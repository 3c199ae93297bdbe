"""Inhibition on values alone: which open incident explains a failure (never a CRITICAL over a
source the inhibitor does not read), how decisions are held back, and the rules the tick derives
from the checks' sources (the same path, table or query; `after=` an inhibitor's asset)."""

from __future__ import annotations

import dataclasses
import datetime as dt

from alerting import Alert, NotifyReason, update_incident
from alerting.inhibition import Inhibitor, InhibitRule, inhibit, inhibited, inhibition_of
from alerting.stages import Decision
from checkers import AlertLevel, PredicateSingleDatasetChecker
from checkers.parsers import (
    CallableParser,
    CsvParser,
    HttpJsonParser,
    JdbcParser,
    ParquetParser,
    SourceIdentity,
    SqlQueryParser,
    TableParser,
)
from checks import Guarded, QualityCheck
from scheduling.tick.inhibit_rules import inhibit_rules
from tests.alerting.conftest import T0, outcome

W, E, C = AlertLevel.WARNING, AlertLevel.ERROR, AlertLevel.CRITICAL
RULE = InhibitRule((Inhibitor("fresh", "flights"), Inhibitor("volume", "flights")), False)


def _incident(check: str, *, id: int, opened: dt.datetime = T0, level=E, resolved=False):
    incident, _ = update_incident(None, Alert.from_outcome(outcome(level, check=check)), opened)
    if resolved:
        incident, _ = update_incident(incident, Alert.from_outcome(outcome(None, check=check)), T0)
    return dataclasses.replace(incident, id=id)


def test_an_open_inhibitor_explains_a_failure_over_its_source():
    fresh = _incident("fresh", id=1)
    found = inhibition_of(_incident("amounts", id=3), E, RULE, {"fresh": fresh})
    assert found is not None and found.incident is fresh and found.source == "flights"
    assert found.reason == "inhibited: probably because flights is late (fresh, incident 1)"
    assert inhibited(found.reason) and not inhibited("silenced by 'flights_*'")


def test_the_earliest_open_inhibitor_is_the_one_whose_thread_hears():
    fresh = _incident("fresh", id=4, opened=T0 + dt.timedelta(hours=1))
    volume = _incident("volume", id=2)
    found = inhibition_of(_incident("amounts", id=5), E, RULE, {"fresh": fresh, "volume": volume})
    assert found is not None and found.incident is volume


def test_no_inhibition_without_an_open_inhibitor_for_itself_or_once_resolved():
    assert inhibition_of(_incident("amounts", id=3), E, RULE, {}) is None
    assert (
        inhibition_of(_incident("amounts", id=3), E, None, {"fresh": _incident("fresh", id=1)})
        is None
    )
    resolved = _incident("amounts", id=3, resolved=True)
    assert inhibition_of(resolved, E, RULE, {"fresh": _incident("fresh", id=1)}) is None
    fresh = _incident("fresh", id=1)  # an inhibitor is not explained by itself
    assert inhibition_of(fresh, E, RULE, {"fresh": fresh}) is None


def test_a_critical_is_inhibited_only_when_every_source_it_reads_is_explained():
    opened = {"fresh": _incident("fresh", id=1)}
    assert inhibition_of(_incident("joins", id=3, level=C), C, RULE, opened) is None
    whole = dataclasses.replace(RULE, explains_all=True)
    assert inhibition_of(_incident("joins", id=3, level=C), C, whole, opened) is not None
    assert inhibition_of(_incident("joins", id=3), E, RULE, opened) is not None


def test_inhibit_holds_back_what_would_be_told_only():
    found = inhibition_of(_incident("amounts", id=3), E, RULE, {"fresh": _incident("fresh", id=1)})
    told, quiet = Decision("slack", None, NotifyReason.NEW), Decision("pagerduty", None)
    held = inhibit([told, quiet], found)
    assert held[0].muted == found.reason and held[1].muted is None
    assert inhibit([told], None) == (told,)


# the rules the tick derives from the checks' sources


def _check(name, parser, **attributes):
    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "true")

    body = {"name": name, "parser": parser, "checker": checker, **attributes}
    return type(name.title().replace("_", ""), (QualityCheck,), body, register=False)


def test_rules_follow_the_same_path_table_or_query_and_after():
    flights = lambda: "/lake/flights/"  # noqa: E731 - a lazy path, resolved when compared
    fresh = _check("fresh", ParquetParser(flights), inhibits=True, guards=Guarded("lake/flights"))
    same_path = _check("same_path", CsvParser("/lake/./flights"))
    other_path = _check("other_path", ParquetParser("/lake/planes"))
    both = _check("both", {"f": ParquetParser("/lake/flights"), "p": ParquetParser("/lake/planes")})
    downstream = _check("downstream", TableParser("marts.daily"), after=("lake/flights",))
    ops = _check("ops", SqlQueryParser("sqlite://", "SELECT 1  AS x"), inhibits=True)
    ops_too = _check("ops_too", SqlQueryParser("sqlite://", "SELECT 1 AS x"))
    unknown = _check("unknown", CallableParser(lambda spark: None, name="x"))
    checks = [fresh, same_path, other_path, both, downstream, ops, ops_too, unknown]
    rules = inhibit_rules(checks, T0, candidates=[])
    assert set(rules) == {"same_path", "both", "downstream", "ops_too"}
    assert rules["same_path"] == InhibitRule((Inhibitor("fresh", "flights"),), True)
    assert rules["both"].explains_all is False  # planes is not explained: a CRITICAL notifies
    assert rules["downstream"].inhibitors == (Inhibitor("fresh", "lake/flights"),)
    assert rules["ops_too"].inhibitors[0].check == "ops"


def test_two_inhibitors_over_one_source_may_explain_each_other():
    fresh = _check("fresh", TableParser("flights"), inhibits=True)
    volume = _check("volume", TableParser("FLIGHTS"), inhibits=True)
    rules = inhibit_rules([fresh, volume], T0, candidates=[])
    # the source as each explained check names it
    assert rules["fresh"].inhibitors == (Inhibitor("volume", "flights"),)
    assert rules["volume"].inhibitors == (Inhibitor("fresh", "FLIGHTS"),)


def test_source_identities_name_what_is_read_without_secrets():
    api = HttpJsonParser("https://user:pw@api.example.com/v1/payouts/?token=s3cret")
    assert api.source_identity() == SourceIdentity(
        "url:https://api.example.com/v1/payouts/", "payouts"
    )
    jdbc = JdbcParser("postgresql+psycopg://dq@db/shop", table="Shop.Orders")
    assert jdbc.source_identity() == SourceIdentity("table:shop.orders", "Shop.Orders")
    assert ParquetParser("/lake/flights/").source_identity() == SourceIdentity(
        "path:/lake/flights", "flights"
    )
    assert ParquetParser("s3a://lake/flights/").source_identity().key == "path:s3a://lake/flights"
    assert CallableParser(lambda spark: None, name="x").source_identity() is None
