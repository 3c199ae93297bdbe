"""A broken check never stops the others: `dq run --due` over tests.checks.broken_checks (good
checks beside 37 kinds of broken ones and a module with a syntax error) on a real SQLite project
database; `dq validate` lists every definition problem."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess
import sys

import pytest
import sqlalchemy as sa

from alerting.tables import incidents
from checkers.outcome import Status
from scheduling.cli import main
from scheduling.cli.exits import EXIT_ERROR, EXIT_INVALID, EXIT_OK, EXIT_USAGE
from scheduling.history import history
from scheduling.settings import Settings
from tests.scheduling.broken_package import (
    DEFINITION_PROBLEMS,
    GOOD,
    PACKAGE,
    ROOT,
    RUN_PROBLEMS,
    alerts_by_check,
    dq,
    package_env,
)


def test_the_package_holds_at_least_20_kinds_of_broken_checks():
    assert len(DEFINITION_PROBLEMS) + len(RUN_PROBLEMS) >= 20
    assert any(name.endswith(".syntax_error") for name in DEFINITION_PROBLEMS)


@pytest.fixture
def broken_env(tmp_path, monkeypatch):
    for key, value in package_env(tmp_path).items():
        monkeypatch.setenv(key, value)
    return tmp_path


def _latest() -> dict[str, object]:
    records = history(Settings.from_environment().engine, limit=10_000)
    latest = {}
    for record in reversed(records):  # oldest first: the newest wins
        latest[record.outcome.check] = record.outcome
    return latest


def test_run_due_records_every_good_check_and_an_error_for_each_broken_one(
    broken_env, spark, capsys
):
    tick = dq("run", "--due", "--at", "2026-11-22T07:00:00")
    assert tick.returncode == EXIT_ERROR, tick.stderr[-3000:]
    assert f"module:{PACKAGE}.syntax_error" in tick.stderr  # problems also go to stderr

    outcomes = _latest()
    for name, status in GOOD.items():
        assert outcomes[name].status is status, (name, outcomes[name].error)
    assert outcomes["good_dotted_key"].failing_keys == ("k3",)  # read from the column `a.b`
    broken = {**DEFINITION_PROBLEMS, **RUN_PROBLEMS}
    for name, reason in broken.items():
        outcome = outcomes[name]
        assert outcome.status is Status.ERROR and reason in (outcome.error or ""), (name, outcome)
    assert set(outcomes) == set(GOOD) | set(broken)
    defined = outcomes["clock_as_string"]
    assert defined.error.startswith(  # type: ignore[union-attr]
        f"definition error in {PACKAGE}.definitions.ClockAsString: "
    )

    # Alerted like any ERROR, to the check's owner.
    alerts = alerts_by_check(broken_env / "state")
    assert all(len(alerts[name]) == 1 for name in broken)
    assert alerts["clock_as_string"][0]["outcome"]["owner"] == "team-clock"
    assert alerts["bad_cron"][0]["outcome"]["owner"] == "team-cron"

    # The next ticks (in this process: the package's modules are now cached) report the broken
    # checks again; their open incident absorbs the repeats.
    for at in ("2026-11-22T08:00:00", "2026-11-22T09:00:00"):
        assert main(["run", "--due", "--at", at]) == EXIT_ERROR
    assert "syntax_error" in capsys.readouterr().err
    engine = Settings.from_environment().engine
    runs = history(engine, "clock_as_string")
    assert [r.outcome.status for r in runs] == [Status.ERROR] * 3
    assert [r.outcome.status for r in history(engine, "good_amounts")] == [Status.PASSED] * 3
    with engine.connect() as connection:
        open_incidents = connection.execute(
            sa.select(incidents.c.check_name, incidents.c.failing_runs).where(
                incidents.c.status == "open"
            )
        ).all()
    counts = {name: runs for name, runs in open_incidents}
    assert len(open_incidents) == len(counts)  # one incident per check
    assert all(counts[name] == 3 for name in broken)
    assert all(len(v) == 1 for k, v in alerts_by_check(broken_env / "state").items() if k in broken)


def test_validate_lists_every_definition_problem_without_spark():
    probe = (
        "import sys; from scheduling.cli import main; code = main(['validate']); "
        "from pyspark import SparkContext; assert SparkContext._active_spark_context is None; "
        "sys.exit(code)"
    )
    env = {
        **os.environ,
        "DQ_CHECKS": PACKAGE,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == EXIT_INVALID == 1, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    for name, reason in DEFINITION_PROBLEMS.items():
        module = name.removeprefix("module:") if name.startswith("module:") else None
        matching = [line for line in lines if f": {name}: " in line and reason in line]
        assert len(matching) == 1, (name, done.stdout)
        assert matching[0].startswith(f"{module or PACKAGE}")
    assert len(lines) == len(DEFINITION_PROBLEMS) + 1
    assert lines[-1] == f"16 check(s) fine; {len(DEFINITION_PROBLEMS)} problem(s) in 13 module(s)"


def test_validate_passes_a_clean_package(monkeypatch, capsys):
    monkeypatch.setenv("DQ_CHECKS", "tests.scheduling.cli_fixture_checks")
    assert main(["validate"]) == EXIT_OK
    assert capsys.readouterr().out == "3 check(s), no problems\n"


def test_commands_keep_working_for_the_good_checks(broken_env, spark, capsys):
    manifest = broken_env / "manifest.json"
    assert main(["list", "--at", "2026-11-22T06:30:00"]) == EXIT_OK
    assert main(["manifest", "--out", str(manifest)]) == EXIT_OK
    out, err = capsys.readouterr()
    assert "good_amounts" in out and "clock_as_string" not in out
    assert "27 check(s) could not be defined" in err and f"{PACKAGE}.bad_cron: bad_cron:" in err
    entries = json.loads(manifest.read_text())["checks"]
    names = {c["name"] for c in entries if "problem" not in c}
    assert "good_amounts" in names and not names & set(DEFINITION_PROBLEMS)
    broken = {c["name"] for c in entries if "problem" in c}  # each shows as a failing task
    assert len(broken) == 27 and set(DEFINITION_PROBLEMS) <= broken
    assert main(["due", "--at", "2026-11-22T07:00:00"]) == EXIT_OK  # as `dq run --due` runs them
    listed = capsys.readouterr().out.splitlines()
    assert re.search(r"^good_amounts +due in \(", "\n".join(listed), re.MULTILINE)
    every_tick = [line.split()[0] for line in listed if "due every tick: an ERROR" in line]
    assert sorted(every_tick) == sorted(broken)

    # A broken check asked for by name is its ERROR outcome, not a usage error.
    assert main(["run", "bad_cron", "good_amounts", "--at", "2026-11-22T06:00:00"]) == EXIT_ERROR
    out = capsys.readouterr().out
    assert re.search(r"could not run +bad_cron ", out) and re.search(r"passed +good_amounts ", out)
    assert main(["run", "no_such_check"]) == EXIT_USAGE


def test_run_window_gives_broken_and_unknown_checks_their_error_outcome(broken_env, spark):
    from checkers.outcome import CheckOutcome
    from scheduling.runner import run_window

    end = dt.datetime(2026, 11, 22, 7, 0, tzinfo=dt.UTC)
    names = ["tolerance_as_number", "good_amounts", "renamed_long_ago", "key_missing_column"]
    results = run_window(names, start=end - dt.timedelta(minutes=15), end=end).results
    outcomes = [r for r in results.values() if isinstance(r, CheckOutcome)]
    assert [o.check for o in outcomes] == names
    assert [o.status for o in outcomes] == [
        Status.ERROR,
        Status.PASSED,
        Status.ERROR,
        Status.ERROR,
    ]
    assert "write LessThan(3)" in outcomes[0].error  # type: ignore[operator]
    assert outcomes[2].error.startswith(  # type: ignore[union-attr]
        "no check named 'renamed_long_ago' was loaded; modules that failed to import: "
    )
    assert f"{PACKAGE}.syntax_error" in outcomes[2].error  # type: ignore[operator]
    recorded = _latest()
    assert {n: recorded[n].status for n in names} == {
        n: o.status for n, o in zip(names, outcomes, strict=True)
    }
