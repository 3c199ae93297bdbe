"""Discovery isolation: while `discover_all` imports a package, a broken definition or a module
that fails to import becomes a problem and every other check is still found; defined directly
(pytest, notebooks), a broken check still raises."""

from __future__ import annotations

import itertools
import logging
import textwrap
import uuid

import pytest

from checkers import PredicateSingleDatasetChecker
from checkers.parsers import TableParser
from checks import QualityCheck, registered
from checks.definition import CheckDefinitionError
from checks.registry import collecting, discover, discover_all

HEADER = """
from checkers import PredicateSingleDatasetChecker
from checkers.parsers import TableParser
from checks import QualityCheck
from scheduling.clocks import Cron
"""
_ids = itertools.count()


def _check(name: str, body: str = "") -> str:
    return textwrap.dedent(f"""
        class {name}(QualityCheck):
            parser = TableParser("t")
            {body}

            def checker(self, data):
                return PredicateSingleDatasetChecker(data, "true")
        """)


@pytest.fixture
def package(tmp_path, monkeypatch):
    """`package({"mod": source, ...})` writes a uniquely named package and returns its name."""
    monkeypatch.syspath_prepend(str(tmp_path))

    def write(modules: dict[str, str]) -> str:
        name = f"dq_pkg_{uuid.uuid4().hex[:8]}_{next(_ids)}"
        root = tmp_path / name
        root.mkdir()
        (root / "__init__.py").write_text("")
        for module, source in modules.items():
            (root / f"{module}.py").write_text(source)
        return name

    return write


def test_a_broken_class_is_a_problem_and_its_module_neighbours_still_register(package):
    name = package(
        {
            "orders": HEADER
            + _check("FirstGood", 'owner = "orders-team"')
            + _check("ClockAsText", 'clock = "0 * * * *"\n            owner = "orders-team"')
            + _check("SecondGood")
        }
    )
    found = discover_all(name)
    assert sorted(found.checks) == ["first_good", "second_good"]
    [problem] = found.problems
    assert (problem.name, problem.module, problem.qualname) == (
        "clock_as_text",
        f"{name}.orders",
        "ClockAsText",
    )
    assert problem.owner == "orders-team"
    assert problem.reason == "clock is a string; wrap it: clock = Cron('0 * * * *')"
    assert "clock_as_text" not in registered()


def test_a_raising_class_body_is_named_after_its_check_and_a_module_failure_after_the_module(
    package,
):
    name = package(
        {
            "a_cron": HEADER
            + _check("BeforeIt")
            + _check("BadCron", 'owner = "cron-team"\n            clock = Cron("nope")')
            + _check("AfterIt"),
            "b_import": "import dq_no_such_module_anywhere\n",
            "c_syntax": "class Broken(:\n",
        }
    )
    found = discover_all(name)
    assert sorted(found.checks) == ["before_it"]  # after_it is never defined: an ERROR says so
    by_name = {p.name: p for p in found.problems}
    assert sorted(by_name) == [
        "after_it",
        "bad_cron",
        f"module:{name}.b_import",
        f"module:{name}.c_syntax",
    ]
    assert by_name["after_it"].reason.startswith("not loaded (line ")
    cron = by_name["bad_cron"]
    assert (cron.qualname, cron.owner, cron.import_failed) == ("BadCron", "cron-team", True)
    assert cron.reason.startswith("ValueError: invalid cron expression 'nope'")
    assert "ModuleNotFoundError" in by_name[f"module:{name}.b_import"].reason
    assert "SyntaxError: " in by_name[f"module:{name}.c_syntax"].reason
    # A check asked for by name that is nowhere points at the modules that failed.
    missing = found.missing("after_it")
    assert f"{name}.a_cron" in missing.reason and f"{name}.c_syntax" in missing.reason


def test_problems_are_reported_again_by_the_next_discovery_and_vanish_once_fixed(package, tmp_path):
    name = package(
        {
            "fine": HEADER + _check("Fine") + _check("Tagged", 'tags = "x"'),
            "broken": HEADER + _check("Later", 'clock = Cron("bad")'),
        }
    )
    first = discover_all(name)
    second = discover_all(name)  # modules are cached now: their problems are remembered
    assert first == second and sorted(p.name for p in second.problems) == ["later", "tagged"]

    (tmp_path / name / "broken.py").write_text(
        HEADER + _check("Later", 'clock = Cron("0 * * * *")')
    )
    fixed = discover_all(name)  # the failed module is imported again
    assert sorted(fixed.checks) == ["fine", "later"]
    assert [p.name for p in fixed.problems] == ["tagged"]


def test_the_second_of_two_checks_with_one_name_is_the_problem(package):
    name = package(
        {
            "first": HEADER + _check("Orders", 'name = "orders_ok"'),
            "second": HEADER + _check("Copy", 'name = "orders_ok"'),
        }
    )
    found = discover_all(name)
    assert found.checks["orders_ok"].__module__ == f"{name}.first"
    [problem] = found.problems
    assert problem.name == f"{name}.second.Copy"  # never shadows the good check's name
    assert problem.reason.startswith(
        f"two checks are named 'orders_ok': {name}.first.Orders and {name}.second.Copy"
    )


def test_discover_stays_compatible_and_logs_the_problems(package, caplog):
    name = package({"mod": HEADER + _check("Good") + _check("Bad", "sample_size = -3")})
    with caplog.at_level(logging.WARNING, logger="checks.registry"):
        found = discover(name)
    assert list(found) == ["good"]
    assert "sample_size must be a whole number >= 0" in caplog.text


def test_a_missing_package_is_a_problem_not_a_crash():
    found = discover_all(["dq_package_that_does_not_exist"])
    assert found.checks == {}
    assert [p.name for p in found.problems] == ["module:dq_package_that_does_not_exist"]


def test_direct_definitions_still_raise_with_every_mistake_listed():
    with pytest.raises(CheckDefinitionError) as raised:

        class Sloppy(QualityCheck, register=False):
            parser = TableParser("t")
            tolerance = 0.05
            tags = "daily"

            def checker(self, data):
                return PredicateSingleDatasetChecker(data, "true")

    assert isinstance(raised.value, TypeError) and isinstance(raised.value, ValueError)
    assert raised.value.problems == [
        "tolerance must be a Tolerance, got 0.05: for 'at most a share of 0.05' write "
        "ShareAtMost(0.05)",
        "tags is one string; give a tuple of them: tags = ('daily',)",
    ]


def test_collecting_turns_a_definition_error_into_no_registration():
    with collecting():

        class CollectedClock(QualityCheck):
            parser = TableParser("t")
            clock = "0 * * * *"

            def checker(self, data):
                return PredicateSingleDatasetChecker(data, "true")

    assert "collected_clock" not in registered()
    with pytest.raises(TypeError, match="clock is a string"):  # outside, it raises again

        class RaisedClock(QualityCheck):
            parser = TableParser("t")
            clock = "0 * * * *"

            def checker(self, data):
                return PredicateSingleDatasetChecker(data, "true")


def test_the_shipped_examples_register_only_when_a_package_names_them():
    import checks.examples  # noqa: F401  (imported: registered, yet not a project's check)

    assert discover_all("checks").checks == {}
    assert not any(m.startswith("checks.pytest_plugin") for m in _walked("checks"))
    assert "flight_destinations_known" in discover_all("checks.examples").checks
    assert list(discover_all(["checks", "checks.examples.referential"]).checks) == [
        "flight_destinations_known"
    ]


def _walked(package: str) -> list[str]:
    from checks.registry import _walk

    return list(_walk(package, [package]))


def test_a_check_not_found_names_the_packages_searched(package):
    name = package({"mod": HEADER + _check("Present")})
    missing = discover_all([name]).missing("absent")
    assert missing.reason.endswith(
        f"the check packages here are {name} (DQ_CHECKS, or `checks` in dq.toml)"
    )
