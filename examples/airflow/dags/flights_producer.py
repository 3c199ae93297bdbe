"""Producing DAG of the Airflow example: lands a few flights as CSV and announces them as the
asset "producer/flights" (which triggers the quality check); the previous `_SUCCESS` goes
first, as new data is not ready until the check passes it. Trigger with
`--conf '{"missing_destinations": 3}'` to land bad data. Parse-cheap: no Spark, no checks."""

from __future__ import annotations

import datetime as dt

from airflow.sdk import Asset, Param, dag, get_current_context, task

from examples.airflow.lake import LANDED, flights_dir, land_flights

FLIGHTS = Asset(name=LANDED, uri=f"file://{flights_dir()}")


@task(outlets=[FLIGHTS])
def land() -> str:
    missing = int(get_current_context()["params"]["missing_destinations"])
    return str(land_flights(missing))


@dag(
    dag_id="flights_producer",
    schedule=None,
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
    catchup=False,
    params={"missing_destinations": Param(0, type="integer", minimum=0)},
    tags=["dq-example"],
)
def flights_producer() -> None:
    land()


flights_producer()
