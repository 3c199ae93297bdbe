"""Mistakes refused when each class is defined; the module itself imports, so its good check
(`definitions_neighbour`) runs."""

from __future__ import annotations

from checkers import AlertLevel, PredicateSingleDatasetChecker
from checks import QualityCheck
from scheduling.clocks import Cron
from tests.checks.broken_checks import SOURCE

HOURLY = Cron("0 * * * *")


class ClockAsString(QualityCheck):
    clock = "0 * * * *"
    parser = SOURCE
    owner = "team-clock"

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "true")


class MissingParser(QualityCheck):
    clock = HOURLY

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "true")


class MissingChecker(QualityCheck):
    clock = HOURLY
    parser = SOURCE


class BadName(QualityCheck):
    name = "Orders Check!"
    clock = HOURLY
    parser = SOURCE

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "true")


class ToleranceAsNumber(QualityCheck):
    clock = HOURLY
    parser = SOURCE
    tolerance = 3

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "true")


class AlertLevelAsLevel(QualityCheck):
    clock = HOURLY
    parser = SOURCE
    alert_level = AlertLevel.WARNING

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "true")


class ErrorLevelAsText(QualityCheck):
    clock = HOURLY
    parser = SOURCE
    error_level = "critical"

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "true")


class EscalationAsDict(QualityCheck):
    clock = HOURLY
    parser = SOURCE
    escalation = {"slack": "warning"}  # noqa: RUF012

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "true")


class TagsAsString(QualityCheck):
    clock = HOURLY
    parser = SOURCE
    tags = "payments"

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "true")


class MaskedColumnsAsString(QualityCheck):
    clock = HOURLY
    parser = SOURCE
    masked_columns = "email"

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "true")


class NegativeSampleSize(QualityCheck):
    clock = HOURLY
    parser = SOURCE
    sample_size = -1

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "true")


class ParserAsString(QualityCheck):
    clock = HOURLY
    parser = "data/orders.csv"

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "true")


class ParserDictOfStrings(QualityCheck):
    clock = HOURLY
    parser = {"ops": "postgresql://ops/orders"}  # noqa: RUF012

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "true")


class OwnerAsList(QualityCheck):
    clock = HOURLY
    parser = SOURCE
    owner = ["alice"]  # noqa: RUF012

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "true")


class DefinitionsNeighbour(QualityCheck):
    clock = HOURLY
    parser = SOURCE

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "id > 0")
