"""The DAG as a platform team operates it, from the package's stand: three scheduled ticks in a row
with a team's check file edited after the manifest was generated (stale) and one check whose
definition is broken. The stale manifest stops nothing and tells the platform's owner once; the
broken check fails its own task each tick, never evaluated again in-process (its definition
decides), while a missing file is read again once, as its incident opens; the runs stay green;
the grid names each outcome's level, and a red task's failure is one line."""

from __future__ import annotations

import datetime as dt
import json
import urllib.request

import pytest
import sqlalchemy as sa

from alerting.tables import incidents, runs
from tests.dags.airflow_stand import AirflowStand, DagRun
from tests.dags.conftest import LAST_TICK_START, TICK_START

# Waits for real Airflow runs that start Spark (the package's stand). `make test-fast` skips it.
pytestmark = pytest.mark.slow

BROKEN = "numbers_broken_definition"
MISSING = "numbers_from_missing_file"
STARTS = [dt.datetime.fromisoformat(TICK_START) + dt.timedelta(minutes=15 * n) for n in range(3)]


@pytest.fixture(scope="module")
def ticks(shared_stand) -> tuple[AirflowStand, list[DagRun]]:
    """The stand's three scheduled runs of the dq DAG, (06:45, 07:00] to (07:15, 07:30]."""
    stand = shared_stand.stand
    last = dt.datetime.fromisoformat(LAST_TICK_START)
    stand.wait_for_run("dq_checks", lambda r: r.data_interval_start == last, timeout=900)
    by_start = {r.data_interval_start: r for r in stand.dag_runs("dq_checks")}
    return stand, [by_start[s] for s in STARTS]


STALE = "✖ manifest out of date"
BROKEN_SHOWN = f"✖ could not run · {BROKEN}"


def test_a_stale_manifest_stops_nothing_and_tells_the_platform_once(ticks, shared_stand):
    stand, runs_ = ticks
    listed = stand.airflow("dags", "list-import-errors", "--output", "plain")
    assert listed.returncode == 0 and "No data found" in listed.stdout, listed.stdout
    assert stand.metadata.import_errors() == {}
    for run in runs_:  # every check of the last good manifest ran, the edited one as edited
        summaries = stand.xcom("dq_checks", run.run_id, "evaluate", key="outcomes")
        assert summaries["team_letters_short"]["status"] == "passed"
        assert summaries["letters_present"]["status"] == "passed"
        assert stand.shown("dq_checks", run.run_id)[STALE] == ["failed"]  # in each tick's grid
    first = runs_[0].run_id
    log = stand.task_log(
        "dq_checks", first, "outcome", map_index=stand.map_index("dq_checks", first, STALE)
    )
    assert "out of date with the checks (team_edits: changed team_edits.py)" in log
    alerts = (shared_stand.home / "state" / "alerts.jsonl").read_text().splitlines()
    told = [json.loads(a) for a in alerts if '"dq_manifest"' in a]
    # told new once, for one incident, to the platform's owner: other modules' ticks on the
    # shared stand (at other logical times) may add a group root naming it, or the policy's
    # reminder once its repeat interval has passed between those times
    mine = [a for a in told if a["outcome"]["check"] == "dq_manifest"]
    assert mine and all(a["outcome"]["owner"] == "platform-team" for a in mine)
    assert [a["reason"] for a in mine].count("new") == 1
    assert len({a["incident_id"] for a in mine}) == 1


def test_a_broken_check_fails_its_task_not_the_runs_and_is_retried_once(ticks):
    stand, runs_ = ticks
    assert [r.state for r in runs_] == ["success"] * 3  # the tick leaf: every check evaluated
    engine = sa.create_engine(stand.env["DQ_DATABASE_URL"])
    with engine.connect() as connection:
        outcomes, missing = (
            [json.loads(row[0]) for row in connection.execute(_outcomes(name))]
            for name in (BROKEN, MISSING)
        )
        opened = connection.execute(
            sa.select(incidents.c.failing_runs).where(incidents.c.check_name == BROKEN)
        ).all()
    assert [o["status"] for o in outcomes] == ["error"] * 3
    # its definition decides: never read again in-process, in no tick
    assert [o["attempts"] for o in outcomes] == [1, 1, 1]
    # a source that did not load is read again as its incident opens, not in the ticks after
    assert [(o["status"], o["attempts"]) for o in missing] == [
        ("error", 2),
        ("error", 1),
        ("error", 1),
    ]
    assert "no_such_column" in outcomes[0]["error"]
    assert opened == [(3,)]  # one incident, three failing runs
    for run in runs_:
        assert stand.shown("dq_checks", run.run_id)[BROKEN_SHOWN] == ["failed"]  # no retry


def _outcomes(check: str) -> sa.Select:
    return sa.select(runs.c.outcome).where(runs.c.check_name == check).order_by(runs.c.id)


def _grid(stand: AirflowStand, run: DagRun) -> dict[str, tuple[str, str | None]]:
    """What the REST API gives the grid of the mapped `outcome` task: the instance's name
    (rendered map index) -> (task display name, state)."""
    url = (
        f"http://127.0.0.1:{stand.api_port}/api/v2/dags/dq_checks/dagRuns/"
        f"{run.run_id}/taskInstances?limit=500"
    )
    with urllib.request.urlopen(url, timeout=30) as answer:
        found = json.load(answer)["task_instances"]
    return {
        t["rendered_map_index"]: (t["task_display_name"], t["state"])
        for t in found
        if t["task_id"] == "outcome"
    }


def test_the_grid_shows_each_outcomes_level_and_a_red_task_fails_in_one_line(ticks):
    stand, runs_ = ticks
    grid = _grid(stand, runs_[0])
    assert {name: grid[name] for name in GRID} == {n: ("outcome", s) for n, s in GRID.items()}
    first = runs_[0].run_id
    index = stand.map_index("dq_checks", first, "✖ FAILED · numbers_odd")
    log = stand.task_log("dq_checks", first, "outcome", map_index=index)
    path = stand.task_log_path("dq_checks", first, "outcome", map_index=index)
    records = [json.loads(line) for line in path.read_text().splitlines() if line.startswith("{")]
    exited = [r for r in records if r.get("event") == "Task exited"]
    one_line = "numbers_odd: FAILED (level ERROR), 1/3 failing (33.33%); failing keys: -2"
    assert [r["exit_code"] for r in exited] == [one_line]  # the failure's message: one line
    assert one_line in log.splitlines()
    assert "Traceback" not in path.read_text() and not any(r.get("error_detail") for r in records)
    evaluate = stand.task_log_path("dq_checks", first, "evaluate").read_text()
    lines = [json.loads(x) for x in evaluate.splitlines() if x.startswith("{")]
    errors = [str(x.get("event")) for x in lines if x.get("level") == "error"]
    # filtering evaluate's log by ERROR finds the outcomes that need someone, not Spark's output
    assert errors and all(e.split(":")[0] in ERROR_LINES for e in errors), errors


#: The four kinds the issue names, and a tolerated one, as the grid shows them: kind and check.
GRID = {
    "✖ CRITICAL · every_quarter_positive": "failed",
    "✖ FAILED · numbers_odd": "failed",
    "⚠ warning · numbers_below_three": "success",
    "✖ could not run · numbers_from_missing_file": "failed",
    "≈ tolerated · letters_lowercase": "success",
}
#: The outcomes evaluate logs at ERROR in the first tick (CRITICAL, ERROR level, could not run).
ERROR_LINES = {
    "every_quarter_positive",
    "numbers_odd",
    "numbers_from_missing_file",
    "numbers_broken_definition",
    "dq_manifest",
}
