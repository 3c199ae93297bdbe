"""Checks for the DAG tests, on two CSV sources: every quarter, six checks on `numbers` and two on
`letters` are due (one CRITICAL failure, one ERROR-level failure, one WARNING failure, a pass, an
ERROR on a missing file, one whose definition is broken, a tolerated one); `nightly_small` fires
only at 03:00. Two guard a dataset."""

from __future__ import annotations

import os

from checkers import AlertLevel, FixedLevel, PredicateSingleDatasetChecker
from checkers.parsers import CsvParser
from checkers.tolerances import LessThan
from checks import Guarded, QualityCheck
from scheduling.clocks import Cron

NUMBERS = CsvParser(lambda: os.environ["DQ_FIXTURE_CSV"], schema="n int")
LETTERS = CsvParser(lambda: os.environ["DQ_FIXTURE_LETTERS"], schema="c string")
MISSING = CsvParser(lambda: os.environ["DQ_FIXTURE_CSV"] + ".missing", schema="n int")
QUARTER = Cron("*/15 * * * *")


class EveryQuarterPositive(QualityCheck):
    description = "Numbers are positive."
    clock = QUARTER
    parser = NUMBERS
    alert_level = FixedLevel(AlertLevel.CRITICAL)
    guards = Guarded("fixture/numbers")  # red: no marker, no asset event

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "n > 0", key="n")


class NumbersBelowThree(QualityCheck):
    description = "Numbers stay below three (a warning only)."
    clock = QUARTER
    parser = NUMBERS
    alert_level = FixedLevel(AlertLevel.WARNING)

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "n < 3")


class NumbersOdd(QualityCheck):
    description = "Numbers are odd (an ERROR-level failure: -2 is not)."
    clock = QUARTER
    parser = NUMBERS

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "abs(n) % 2 = 1", key="n")


class NumbersBrokenDefinition(QualityCheck):
    description = "A predicate on a column nobody has: broken every tick, until someone fixes it."
    clock = QUARTER
    parser = NUMBERS

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "no_such_column > 0")


class NumbersPresent(QualityCheck):
    description = "Every row has a number."
    clock = QUARTER
    parser = NUMBERS

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "n IS NOT NULL")


class NumbersFromMissingFile(QualityCheck):
    description = "A source that is not there: an ERROR outcome."
    clock = QUARTER
    parser = MISSING

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "n > 0")


class LettersLowercase(QualityCheck):
    description = "Letters are lowercase; one uppercase letter is tolerated."
    clock = QUARTER
    parser = LETTERS
    tolerance = LessThan(2)

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "c = lower(c)")


class LettersPresent(QualityCheck):
    description = "Every row has a letter."
    clock = QUARTER
    parser = LETTERS
    guards = Guarded("fixture/letters")  # green: a marker beside letters.csv and an asset event

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "c IS NOT NULL")


class NightlySmall(QualityCheck):
    description = "Numbers are small."
    clock = Cron("0 3 * * *")
    parser = NUMBERS

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "n < 100")
