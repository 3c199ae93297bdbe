from __future__ import annotations

import pytest

from checkers import LessThan, PredicateSingleDatasetChecker
from checkers.parsers import CallableParser, TableParser
from checks import QualityCheck, get, registered

PARSER = TableParser("bookings")


def test_subclasses_register_under_a_snake_case_name():
    class BookingsHaveCars(QualityCheck):
        parser = PARSER

        def checker(self, data):
            return PredicateSingleDatasetChecker(data, "car_id IS NOT NULL")

    assert BookingsHaveCars.name == "bookings_have_cars"
    assert get("bookings_have_cars") is BookingsHaveCars
    assert "bookings_have_cars" in registered()


def test_abstract_bases_and_unregistered_checks_stay_out():
    class TeamBase(QualityCheck):
        abstract = True
        owner = "payments"

    class Concrete(TeamBase, register=False):
        parser = PARSER

        def checker(self, data):
            return PredicateSingleDatasetChecker(data, "true")

    assert "team_base" not in registered() and "concrete" not in registered()
    assert Concrete.owner == "payments" and Concrete.abstract is False


def test_definition_errors_say_how_to_fix_them():
    with pytest.raises(TypeError, match="needs a `parser`"):

        class NoParser(QualityCheck, register=False):
            def checker(self, data):
                return PredicateSingleDatasetChecker(data, "true")

    with pytest.raises(TypeError, match="needs a `checker"):

        class NoChecker(QualityCheck, register=False):
            parser = PARSER

    with pytest.raises(TypeError, match="must be a Tolerance"):

        class BadTolerance(QualityCheck, register=False):
            parser = PARSER
            tolerance = 3

            def checker(self, data):
                return PredicateSingleDatasetChecker(data, "true")


def test_two_checks_with_one_name_are_refused():
    class Duplicated(QualityCheck):
        name = "duplicated_name_check"
        parser = PARSER
        tolerance = LessThan(2)

        def checker(self, data):
            return PredicateSingleDatasetChecker(data, "true")

    with pytest.raises(ValueError, match="two checks are named 'duplicated_name_check'"):

        class Other(QualityCheck):
            name = "duplicated_name_check"
            parser = CallableParser(lambda spark: spark.range(1))

            def checker(self, data):
                return PredicateSingleDatasetChecker(data, "true")


def test_definition_is_pure_and_parsers_are_named():
    class TwoSources(QualityCheck, register=False):
        parser = {"ops": PARSER, "lake": TableParser("lake_bookings")}  # noqa: RUF012

        def checker(self, data):
            raise AssertionError("never called at definition")

    check = TwoSources()
    assert check.takes_mapping() and sorted(check.sources()) == ["lake", "ops"]


def test_sources_may_depend_on_the_run_time():
    import datetime as dt

    class Daily(QualityCheck, register=False):
        def parser(self):
            return TableParser(f"events_{self.now:%Y%m%d}")

        def checker(self, data):
            return PredicateSingleDatasetChecker(data, "true")

    check = Daily(now=dt.datetime(2026, 11, 21, tzinfo=dt.UTC))
    assert check.sources() == {"data": TableParser("events_20261121")}


def test_discover_returns_only_the_packages_checks():
    from checks import discover

    found = discover("checks.examples")
    assert "flight_destinations_known" in found
    assert all(c.__module__.startswith("checks.examples.") for c in found.values())
    assert "bookings_have_cars" not in found  # registered by a test module, not the package
