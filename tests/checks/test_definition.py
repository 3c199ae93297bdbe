"""Definition-time validation: each mistake a team can make in a check class, or in the values
its class body builds, is refused when it is defined, with a message that says how to fix it."""

from __future__ import annotations

import datetime as dt

import pytest

from checkers import (
    AlertLevel,
    FailingElementsThresholds,
    FailingShareThresholds,
    FixedLevel,
    KnownBroken,
    LessThan,
    PredicateSingleDatasetChecker,
    ShareAtMost,
)
from checkers.parsers import CsvParser, TableParser
from checks import QualityCheck
from checks.definition import CheckDefinitionError
from scheduling.clocks import Cron, Every


def _define(**attributes: object) -> type:
    def checker(self, data):  # type: ignore[no-untyped-def]
        return PredicateSingleDatasetChecker(data, "true")

    namespace = {"parser": TableParser("t"), "checker": checker, **attributes}
    return type("Defined", (QualityCheck,), namespace, register=False)


@pytest.mark.parametrize(
    ("attributes", "message"),
    [
        ({"clock": "0 6 * * *"}, "clock is a string; wrap it: clock = Cron('0 6 * * *')"),
        ({"clock": 15}, "clock must have fires_between(start, end), e.g. Cron('0 * * * *')"),
        ({"tolerance": 5}, "for 'fewer than 5 failing' write LessThan(5)"),
        ({"tolerance": "none"}, "e.g. LessThan(10), ShareAtMost(0.01) or KnownBroken([...])"),
        ({"alert_level": AlertLevel.CRITICAL}, "FixedLevel(AlertLevel.CRITICAL)"),
        ({"alert_level": 10}, "e.g. FailingElementsThresholds(warning=10, error=100)"),
        ({"error_level": "warning"}, "error_level = AlertLevel.WARNING, got 'warning'"),
        ({"escalation": "pagerduty"}, "escalation must be an EscalationPolicy (or None"),
        ({"tags": "daily"}, "tags = ('daily',)"),
        ({"tags": ["ok", 3]}, "tags must be a tuple of strings"),
        ({"masked_columns": "email"}, "masked_columns = ('email',)"),
        ({"sample_size": -1}, "sample_size must be a whole number >= 0"),
        ({"sample_size": 2.5}, "sample_size must be a whole number >= 0"),
        ({"allow_empty": "yes"}, "allow_empty must be True or False"),
        ({"owner": None}, "owner must be a string"),
        ({"runbook": "wiki/orders"}, 'runbook must be an http(s) URL, e.g. runbook = "https://'),
        ({"runbook": "javascript:alert(1)"}, "runbook must be an http(s) URL"),
        ({"runbook": 3}, "runbook must be an http(s) URL"),
        ({"description": ("a", "b")}, "description must be a string"),
        ({"parser": "lake/orders"}, "parser is a string; wrap it in a Parser"),
        ({"parser": CsvParser}, "parser is the class CsvParser; build one: CsvParser(...)"),
        ({"parser": {}}, "parser as a dict maps names to Parsers"),
        ({"parser": 42}, "parser must be a Parser, a dict of them or a method"),
        ({"checker": "amount > 0"}, "checker must be a method"),
        ({"name": "Orders"}, "name 'Orders': use lowercase letters"),
        ({"inhibits": "yes"}, "inhibits must be True or False, got 'yes'"),
    ],
)
def test_a_wrong_attribute_is_refused_with_a_fix(attributes, message):
    with pytest.raises(CheckDefinitionError) as raised:
        _define(**attributes)
    [problem] = raised.value.problems
    assert message in problem


def test_a_correct_definition_passes_every_rule():
    check = _define(
        clock=Cron("0 6 * * *"),
        tolerance=KnownBroken(["a"], columns="id") | LessThan(3),
        alert_level=FailingShareThresholds(warning=0.01, error=0.1),
        error_level=AlertLevel.CRITICAL,
        runbook="https://wiki.example.com/orders",
        tags=["daily"],
        masked_columns=("email",),
        sample_size=0,
        allow_empty=True,
        owner="payments",
        parser={"ops": TableParser("ops"), "lake": TableParser("lake")},
    )
    assert check.tags == ["daily"]


@pytest.mark.parametrize(
    ("build", "error", "message"),
    [
        (lambda: Cron("every hour"), ValueError, "use five fields"),
        (lambda: Cron("0 6 * * *", tz="Paris"), ValueError, "use an IANA name such as 'UTC'"),
        (lambda: Cron(6), TypeError, "Cron('0 6 * * *', tz='Europe/Paris')"),
        (lambda: Every(3600), TypeError, "Every(dt.timedelta(hours=1))"),
        (lambda: Every(dt.timedelta(0)), ValueError, "positive interval"),
        (
            lambda: Every(dt.timedelta(hours=1), dt.datetime(2026, 1, 1)),
            ValueError,
            "tzinfo=dt.UTC",
        ),
        (lambda: FailingElementsThresholds(100, 10), ValueError, "swap them"),
        (lambda: FailingElementsThresholds(1.5, 10), TypeError, "whole numbers"),
        (lambda: FailingShareThresholds(0.5, 0.1), ValueError, "swap them"),
        (lambda: FailingShareThresholds("1%", 0.1), TypeError, "numbers from 0 to 1"),
        (lambda: FixedLevel("ERROR"), TypeError, "e.g. AlertLevel.ERROR"),
        (lambda: LessThan("3"), TypeError, "e.g. LessThan(10)"),
        (lambda: LessThan(-1), ValueError, "n >= 0"),
        (lambda: ShareAtMost(5), ValueError, "0.05 is 5%"),
        (lambda: ShareAtMost("5%"), TypeError, "e.g. 0.01"),
        (lambda: KnownBroken("N123"), TypeError, "KnownBroken(['N123'])"),
        (lambda: KnownBroken(["N1"], columns=[1]), TypeError, "column names"),
        (lambda: LessThan(3) & 5, TypeError, "KnownBroken([...]) & LessThan(3)"),
        (lambda: LessThan(3) | "x", TypeError, "tolerances combine with tolerances"),
    ],
)
def test_values_built_in_a_class_body_refuse_mistakes_with_a_fix(build, error, message):
    with pytest.raises(error, match=None) as raised:
        build()
    assert message in str(raised.value)
