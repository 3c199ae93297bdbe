"""The stand's probe DAGs (no Spark): `stand_probe` ends each kind of task state once, and
`stand_bounds` shows which intervals `end_date` admits (tests/dags/test_airflow_stand.py). Their
own variables, so that they share the stand with the dq DAG (which reads DQ_DAG_*)."""

from __future__ import annotations

import datetime as dt

PROBE = """
import datetime as dt
import os

from airflow.sdk import Asset, CronDataIntervalTimetable, dag, get_current_context, task
from airflow.sdk.exceptions import AirflowFailException, AirflowSkipException

PASSED = Asset(name="probe_passed", uri="file:///tmp/stand-probe/passed")
SCHEDULE = CronDataIntervalTimetable("*/15 * * * *", timezone="UTC")


def _env_time(name):
    return dt.datetime.fromisoformat(os.environ[name])


@dag(
    dag_id="stand_probe",
    schedule=SCHEDULE,
    start_date=_env_time("STAND_PROBE_START"),
    end_date=_env_time("STAND_PROBE_END"),
    catchup=os.environ["STAND_PROBE_CATCHUP"].lower() in ("1", "true"),
    default_args={"retries": 3, "retry_delay": dt.timedelta(seconds=1)},
)
def stand_probe():
    @task(outlets=[PASSED])
    def passes(*, outlet_events):
        context = get_current_context()
        window = [context[k].isoformat() for k in ("data_interval_start", "data_interval_end")]
        print("probe window", window)
        outlet_events[PASSED].extra = {"window_end": window[1]}
        return window

    @task
    def critical():
        raise AirflowFailException("critical outcome")  # no retry, whatever `retries` says

    @task(retries=1)
    def error():
        raise ValueError("could not evaluate")

    @task
    def not_due():
        raise AirflowSkipException("not due")

    @task
    def square(x):
        return x * x

    passes()
    critical()
    error()
    not_due()
    square.expand(x=[2, 3])


@dag(
    dag_id="stand_bounds",
    schedule=SCHEDULE,
    start_date=_env_time("STAND_PROBE_START"),
    end_date=_env_time("STAND_PROBE_START") + dt.timedelta(minutes=15),
    catchup=True,
)
def stand_bounds():
    @task
    def noop():
        pass

    noop()


stand_probe()
stand_bounds()
"""
START = dt.datetime(2026, 1, 1, 23, 45, tzinfo=dt.UTC)
MIDNIGHT = dt.datetime(2026, 1, 2, tzinfo=dt.UTC)


PROBE_ENV = {
    "STAND_PROBE_START": START.isoformat(),
    "STAND_PROBE_END": "2026-01-01T23:59:00+00:00",
    "STAND_PROBE_CATCHUP": "true",
}
