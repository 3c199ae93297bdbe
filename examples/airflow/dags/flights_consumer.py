"""Consuming DAG of the Airflow example: scheduled on "lake/flights passed quality", the asset
the dq_checks DAG emits after a green run of the check guarding it (convention in
scheduling/tick/readiness.py: name = the guarded asset, uri = dq://ready/<name>). Parse-cheap."""

from __future__ import annotations

import datetime as dt
import json

from airflow.sdk import Asset, dag, get_current_context, task

from examples.airflow.lake import PASSED, flights_dir

READY = Asset(name=PASSED, uri=f"dq://ready/{PASSED}")


@task
def routing_report() -> dict[str, object]:
    events = get_current_context()["triggering_asset_events"]
    for event in events[READY]:
        print(f"{PASSED} passed quality: {event.extra}")
    marker = flights_dir() / "_SUCCESS"
    if not marker.exists():  # newer flights landed since and wait for their check
        return {"flights": None}
    passed = json.loads(marker.read_text())
    rows = (flights_dir() / "part-0.csv").read_text().splitlines()[1:]
    return {"flights": len(rows), "window_end": passed["window_end"], "run_id": passed["run_id"]}


@dag(
    dag_id="flights_consumer",
    schedule=READY,
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
    catchup=False,
    tags=["dq-example"],
)
def flights_consumer() -> None:
    routing_report()


flights_consumer()
