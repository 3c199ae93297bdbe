"""One Airflow stand for the tests of this package (booting one costs a minute or more; it stops
after the package's last test, so it costs no CPU while other tests run): a real scheduler,
dag-processor and API server hosting the stand's probe DAGs (test_airflow_stand) and
the repository's DAG with the Airflow example's DAGs (test_scheduled_tick), over one metadata
database migrated once (test_dag copies it)."""

from __future__ import annotations

import os
import shutil
import subprocess
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.dags.airflow_stand import AIRFLOW, AirflowStand, airflow_environment, free_port
from tests.dags.environment import GATE, ROOT, dag_environment
from tests.dags.probe_dags import PROBE, PROBE_ENV
from tests.dags.spark_events import EventLogs

#: The three intervals the dq DAG replays: (06:45, 07:00] (test_scheduled_tick and
#: test_operated_tick), then (07:00, 07:15] and (07:15, 07:30] (test_operated_tick: what repeats,
#: and what does not, when a broken check and a stale manifest are still there ticks later).
TICK_START = "2026-11-22T06:45:00+00:00"
LAST_TICK_START = "2026-11-22T07:15:00+00:00"
DQ_DAGS = [ROOT / "dags" / "dq_checks.py", *(ROOT / "examples" / "airflow" / "dags").glob("*.py")]


@pytest.fixture(scope="package")
def migrated_airflow_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An Airflow metadata database with every migration applied, to copy (SQLite file)."""
    home = tmp_path_factory.mktemp("airflow-db")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW")}
    env |= airflow_environment(
        home, home / "dags", api_port=free_port(), log_port=free_port(), parallelism=1
    )
    subprocess.run([str(AIRFLOW), "db", "migrate"], env=env, check=True, capture_output=True)
    return home / "airflow.db"


@dataclass(frozen=True)
class SharedStand:
    """The running stand, where the dq DAG's files live, and its Spark event logs."""

    stand: AirflowStand
    home: Path
    events: EventLogs


@pytest.fixture(scope="package")
def shared_stand(
    tmp_path_factory: pytest.TempPathFactory, migrated_airflow_db: Path
) -> Iterator[SharedStand]:
    home = tmp_path_factory.mktemp("stand")
    dags = home / "dags"
    dags.mkdir()
    (dags / "probe.py").write_text(textwrap.dedent(PROBE))
    for dag_file in DQ_DAGS:
        (dags / dag_file.name).symlink_to(dag_file)
    events = EventLogs.create(home / "spark")
    env = {
        k: v
        for k, v in dag_environment(home, example=True, edited_team=True).items()
        if not k.startswith("AIRFLOW") and os.environ.get(k) != v
    }
    env.update(events.env())
    env.update(DQ_DAG_START=TICK_START, DQ_DAG_END=LAST_TICK_START, DQ_DAG_CATCHUP="1")
    # the in-process retry of an ERROR without its delay; who hears of a stale manifest; the
    # REST API answers the test without a login (the grid's task display)
    env.update(DQ_ERROR_RETRY_DELAY_S="0", DQ_PLATFORM_OWNER="platform-team")
    env.update(AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS="True")
    env.update(PROBE_ENV)
    airflow_home = home / "airflow"
    airflow_home.mkdir()
    shutil.copy(migrated_airflow_db, airflow_home / "airflow.db")
    with AirflowStand(dags, airflow_home, env=env, migrated=True) as stand:
        stand.wait_for_dags("stand_probe", "stand_bounds", "dq_checks", GATE, "flights_producer")
        stand.airflow("dags", "trigger", "flights_producer")  # lands good flights for the gate
        yield SharedStand(stand, home, events)
