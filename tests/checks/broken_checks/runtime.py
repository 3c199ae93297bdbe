"""Checks that define fine but break when they run: each is its own ERROR outcome."""

from __future__ import annotations

from checkers import (
    KnownBroken,
    MetricChecker,
    MetricConstraint,
    PredicateDoubleDatasetsChecker,
    PredicateSingleDatasetChecker,
)
from checkers.metrics import Size
from checks import QualityCheck
from scheduling.clocks import Cron
from tests.checks.broken_checks import SOURCE

HOURLY = Cron("0 * * * *")


class CheckerRaises(QualityCheck):
    clock = HOURLY
    parser = SOURCE

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, self.threshold)  # type: ignore[attr-defined]


class CheckerReturnsText(QualityCheck):
    clock = HOURLY
    parser = SOURCE

    def checker(self, data):
        return "amount >= 0"


class ParserMethodRaises(QualityCheck):
    clock = HOURLY

    def parser(self):
        return {"orders": SOURCE}["order"]

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "true")


class ParserMethodReturnsPath(QualityCheck):
    clock = HOURLY

    def parser(self):
        return f"lake/orders/{self.now:%Y%m%d}"

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "true")


class KnownBrokenWithoutKey(QualityCheck):
    clock = HOURLY
    parser = SOURCE
    tolerance = KnownBroken(["k3"])

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "amount < 100")


class KnownBrokenOnMetrics(QualityCheck):
    clock = HOURLY
    parser = SOURCE
    tolerance = KnownBroken(["k3"], columns=("a.b",))

    def checker(self, data):
        return MetricChecker(data, [MetricConstraint(Size(), lambda n: n > 0)])


class KnownBrokenMissingColumn(QualityCheck):
    clock = HOURLY
    parser = SOURCE
    tolerance = KnownBroken(["k3"], columns=("order_key",))

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "amount < 100")


class KeyMissingColumn(QualityCheck):
    clock = HOURLY
    parser = SOURCE

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "amount < 100", key="order_id")


class DottedKeyMissing(QualityCheck):
    """`a.c` is neither a column nor a struct path (`a.b` is a column, not a struct)."""

    clock = HOURLY
    parser = SOURCE

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "amount < 100", key="a.c")


class JoinKeyMissing(QualityCheck):
    clock = HOURLY
    parser = {"ops": SOURCE, "lake": SOURCE}  # noqa: RUF012

    def checker(self, data):
        return PredicateDoubleDatasetsChecker(data["ops"], data["lake"], on="order_id")


class PredicateOnMissingColumn(QualityCheck):
    clock = HOURLY
    parser = SOURCE

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "price >= 0")
