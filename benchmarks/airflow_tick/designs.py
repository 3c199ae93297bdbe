"""Running the midnight tick one way and measuring it: under a real Airflow scheduler (the stand
of tests/dags/airflow_stand.py) with a given DAG file, or as one `dq run --due` process. Each
design gets a fresh project database and its own Spark event-log directory
(tests/dags/spark_events.py), which counts the Spark applications started and the source reads."""

from __future__ import annotations

import datetime as dt
import shutil
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa

from alerting.tables import runs
from tests.dags.airflow_stand import AirflowStand
from tests.dags.spark_events import EventLogs

ROOT = Path(__file__).resolve().parents[2]
MIDNIGHT = dt.datetime(2026, 1, 2, tzinfo=dt.UTC)
TICK = dt.timedelta(minutes=15)
#: One data interval, (23:45, 00:00]: the interval starting at DQ_DAG_START is the only one
#: whose start is at or before DQ_DAG_END (tests/dags/test_airflow_stand.py).
REPLAY = {
    "DQ_DAG_START": (MIDNIGHT - TICK).isoformat(),
    "DQ_DAG_END": (MIDNIGHT - TICK).isoformat(),
    "DQ_DAG_CATCHUP": "true",
}

#: Airflow's default parsing intervals: the test stand re-parses every 5 s, which would take a
#: share of the two cores from the tick. New DAGs start paused, as Airflow's default does. (The
#: stand's `[workers] min_heartbeat_interval` of 1 s is a deployment's too: docs/deployment.md.)
PRODUCTION_PARSING = {
    "AIRFLOW__DAG_PROCESSOR__MIN_FILE_PROCESS_INTERVAL": "30",
    "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "300",
    "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "True",
}
#: One task run before the measured tick. A freshly started api-server answers the first
#: Execution API call of a task (`PATCH /execution/task-instances/{id}/run`) seconds late (3.3.2:
#: 18 s at load 14, against 0.2 s for the next ones): once per api-server start, not per tick,
#: so a deployment that has run any task since pays it no more.
WARM_UP_DAG = """
import datetime as dt

from airflow.sdk import dag, task


@dag(
    dag_id="warm_up",
    schedule="@once",
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
    is_paused_upon_creation=False,
)
def warm_up():
    @task
    def ran():
        return "warm"

    ran()


warm_up()
"""


@dataclass(frozen=True)
class Tick:
    design: str
    seconds: float
    applications: int
    reads: Counter[str]  # per source path, SQL executions that scanned it
    checks_run: int  # outcomes recorded in the project database
    notes: str = ""


def design_env(work: Path, package_dir: Path, logs: EventLogs) -> dict[str, str]:
    """Settings of every process of one design: checks, a fresh project DB, the event log."""
    return {
        "PYTHONPATH": f"{package_dir}:{ROOT}",
        "DQ_CHECKS": "tick_checks",
        "DQ_DATABASE_URL": f"sqlite:///{work / 'dq.db'}",
        "DQ_STATE_DIR": str(work / "state"),
        "DQ_CONFIG": str(work / "no-dq.toml"),  # absent: no receivers besides the defaults
        **logs.env(),
        **REPLAY,
    }


def _checks_run(work: Path) -> int:
    engine = sa.create_engine(f"sqlite:///{work / 'dq.db'}")
    try:
        with engine.connect() as connection:
            return int(
                connection.execute(sa.select(sa.func.count()).select_from(runs)).scalar_one()
            )
    except sa.exc.OperationalError:  # nothing ran: no tables
        return 0
    finally:
        engine.dispose()


def dq_run_due(work: Path, package_dir: Path) -> Tick:
    """`python -m scheduling.cli run --due --at <midnight>` (the `dq` console script), once."""
    logs = EventLogs.create(work / "spark")
    env = {**_environ(), **design_env(work, package_dir, logs)}
    command = [sys.executable, "-m", "scheduling.cli", "run", "--due", "--at", MIDNIGHT.isoformat()]
    started = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=work, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    (work / "dq-run.log").write_text(done.stdout + done.stderr)
    return Tick(
        "`dq run --due` (one process)",
        seconds,
        len(logs.applications()),
        logs.reads(),
        _checks_run(work),
        f"exit {done.returncode}",
    )


def under_airflow(
    design: str,
    work: Path,
    package_dir: Path,
    *,
    dag_file: Path,
    dag_id: str,
    manifest: Path,
    parallelism: int,
    timeout_s: float,
) -> Tick:
    """The tick as a scheduled run of `dag_id` (from `dag_file`) on a fresh stand; its wall
    time is the DagRun's, from start to end (the stand's start-up and parsing not counted)."""
    dags = work / "dags"
    dags.mkdir(parents=True, exist_ok=True)
    shutil.copy(dag_file, dags / dag_file.name)
    (dags / "warm_up.py").write_text(WARM_UP_DAG)
    logs = EventLogs.create(work / "spark")
    env = {
        **design_env(work, package_dir, logs),
        **PRODUCTION_PARSING,
        "DQ_MANIFEST": str(manifest),
    }
    with AirflowStand(dags, work / "home", env=env, parallelism=parallelism) as stand:
        stand.wait_for_dags(dag_id, "warm_up", timeout=300)
        warm = stand.wait_for_run("warm_up", timeout=300)
        unpaused = stand.airflow("dags", "unpause", dag_id)
        if unpaused.returncode != 0:
            raise RuntimeError(f"airflow dags unpause {dag_id}: {unpaused.stderr}")
        run = stand.wait_for_run(dag_id, timeout=timeout_s)
        states = Counter(ti.state for ti in stand.task_instances(dag_id, run.run_id).values())
        started_s = stand.started_s or 0.0
    summary = f"{sum(states.values())} task instances: " + ", ".join(
        f"{n} {s}" for s, n in sorted(states.items(), key=lambda i: str(i[0]))
    )
    return Tick(
        design,
        run.seconds or 0.0,
        len(logs.applications()),
        logs.reads(),
        _checks_run(work),
        f"run {run.state}; {summary}; stand up in {started_s:.0f} s and a warm-up task "
        f"in {warm.seconds or 0:.0f} s (not counted)",
    )


def _environ() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW")}
