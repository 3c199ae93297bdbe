"""Stored partition states serve every kind of Spark session: an incremental check's definition
digest holds its counted conditions in the form Spark's analyzer gives them (the same on a local
driver and on Spark Connect, where `str()` of a Column is not), so the same check run on a local
driver, then on a Connect server, then on the local driver again reads its data once."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from checkers import PredicateSingleDatasetChecker
from scheduling.tick.digests import canonical_conditions
from tests.checks.test_incremental import DAYS, flights_by_day  # noqa: F401
from tests.incremental_helpers import write_day
from tests.local_connect import local_connect_port
from tests.scheduling.in_process import dq
from tests.scheduling.test_cli_output import REPO, project_env

PREDICATE = "dep_delay IS NULL OR dep_delay < 120"


@pytest.mark.connect  # the Connect pass answers the same text from its server
def test_a_counted_condition_has_one_canonical_form_on_every_session(make_df):
    frame = make_df([(1, "N1")], "dep_delay int, tailnum string")
    plan = PredicateSingleDatasetChecker(frame, PREDICATE, key="tailnum").plan(())
    # str() of this condition is "Column<'not(coalesce(or(isNull(dep_delay), ...' on Connect
    assert canonical_conditions(plan) == [
        "(NOT coalesce(((dep_delay IS NULL) OR (dep_delay < 120)), false))"
    ]
    broken = PredicateSingleDatasetChecker(frame, "no_such_column > 0").plan(())
    assert canonical_conditions(broken) == [str(broken.analyzers[0].condition)]  # type: ignore[attr-defined]


def _rows_read(run: subprocess.CompletedProcess[str]) -> int:
    [outcome] = json.loads(run.stdout)["outcomes"]
    assert outcome["check"] == "inc_delays" and outcome["error"] is None, run.stdout + run.stderr
    return int(outcome["rows_read"])


def test_classic_then_connect_then_classic_reads_the_data_once(tmp_path, flights_by_day):  # noqa: F811
    for day in DAYS[:2]:
        write_day(tmp_path / "lake", day, flights_by_day[day])
    env = project_env(tmp_path) | {
        "DQ_CHECKS": "tests.checks.incremental_fixture_checks",
        "DQ_INC_LAKE": str(tmp_path / "lake"),
    }
    run = ["run", "inc_delays", "--json", "--at"]
    first = _rows_read(dq(env, *run, "2013-02-01T00:00:00", cwd=tmp_path))  # this process
    command = [sys.executable, "-m", "scheduling.cli", *run, "2013-02-01T01:00:00"]
    with local_connect_port():  # a local Connect server, in a `dq` process of its own
        remote = subprocess.run(
            command,
            cwd=tmp_path,
            env=env | {"DQ_SPARK_REMOTE": "local[2]", "PYTHONPATH": str(REPO)},
            capture_output=True,
            text=True,
            timeout=600,
        )
    second = _rows_read(remote)
    third = _rows_read(dq(env, *run, "2013-02-01T02:00:00", cwd=tmp_path))
    assert (first, second, third) == (sum(len(flights_by_day[d]) for d in DAYS[:2]), 0, 0)
