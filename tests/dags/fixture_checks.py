"""Checks for the DAG tests, on two CSV sources: every quarter, six checks on `numbers` and two on
`letters` are due (one CRITICAL failure, one ERROR-level failure, one WARNING failure, a pass, an
ERROR on a missing file, one whose definition is broken, a tolerated one); `nightly_small` fires
only at 03:00. Two guard a dataset."""

from __future__ import annotations

import os
from typing import ClassVar

from checkers import AlertLevel, FixedLevel, PredicateSingleDatasetChecker
from checkers.parsers import CsvParser
from checkers.tolerances import LessThan
from checks import Guarded, QualityCheck
from scheduling.clocks import Cron

NUMBERS = CsvParser(lambda: os.environ["DQ_FIXTURE_CSV"], schema="n int")
LETTERS = CsvParser(lambda: os.environ["DQ_FIXTURE_LETTERS"], schema="c string")
MISSING = CsvParser(lambda: os.environ["DQ_FIXTURE_CSV"] + ".missing", schema="n int")
QUARTER = Cron("*/15 * * * *")


class _Predicate(QualityCheck):
    """Every row of the source holds `predicate` (its failing rows named by `key`), checked
    every quarter on the numbers unless a check says otherwise."""

    abstract = True
    clock = QUARTER
    parser = NUMBERS
    predicate: ClassVar[str]
    key: ClassVar[tuple[str, ...]] = ()

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, self.predicate, key=self.key)


class EveryQuarterPositive(_Predicate):
    description = "Numbers are positive."
    alert_level = FixedLevel(AlertLevel.CRITICAL)
    guards = Guarded("fixture/numbers")  # red: no marker, no asset event
    predicate, key = "n > 0", ("n",)


class NumbersBelowThree(_Predicate):
    description = "Numbers stay below three (a warning only)."
    alert_level = FixedLevel(AlertLevel.WARNING)
    predicate = "n < 3"


class NumbersOdd(_Predicate):
    description = "Numbers are odd (an ERROR-level failure: -2 is not)."
    predicate, key = "abs(n) % 2 = 1", ("n",)


class NumbersBrokenDefinition(_Predicate):
    description = "A predicate on a column nobody has: broken every tick, until someone fixes it."
    predicate = "no_such_column > 0"


class NumbersPresent(_Predicate):
    description = "Every row has a number."
    predicate = "n IS NOT NULL"


class NumbersFromMissingFile(_Predicate):
    description = "A source that is not there: an ERROR outcome."
    parser = MISSING
    predicate = "n > 0"


class LettersLowercase(_Predicate):
    description = "Letters are lowercase; one uppercase letter is tolerated."
    parser = LETTERS
    tolerance = LessThan(2)
    predicate = "c = lower(c)"


class LettersPresent(_Predicate):
    description = "Every row has a letter."
    parser = LETTERS
    guards = Guarded("fixture/letters")  # green: a marker beside letters.csv and an asset event
    predicate = "c IS NOT NULL"


class NightlySmall(_Predicate):
    description = "Numbers are small."
    clock = Cron("0 3 * * *")
    predicate = "n < 100"
