"""Scheduling at scale: DAG parse time and due-evaluation time for 500 and 1,000 registered
checks. Targets: parse under 2 s, due evaluation under 50 ms for 1,000 checks.

    python -m benchmarks.scheduling
"""

from __future__ import annotations

import datetime as dt
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scheduling.airflow.manifest import VERSION, clock_spec
from scheduling.clocks import Cron
from scheduling.windows import due_windows

ROOT = Path(__file__).resolve().parents[1]
SIZES = (500, 1000)
PARSE = """
import time, sys
started = time.perf_counter()
from airflow.dag_processing.dagbag import DagBag
imported = time.perf_counter()
bag = DagBag(sys.argv[1])
parsed = time.perf_counter()
assert not bag.import_errors, bag.import_errors
dag = bag.dags["dq_checks"]
print(imported - started, parsed - imported, len(dag.tasks))
"""


def clocks(count: int) -> list[tuple[str, Cron]]:
    """A registry's worth of clocks: every 15 minutes, hourly at various minutes, daily at
    various times, weekly; most expressions distinct, as in a real registry."""
    pool = []
    for i in range(count):
        kind = i % 4
        if kind == 0:
            expression = "*/15 * * * *"
        elif kind == 1:
            expression = f"{i % 60} * * * *"
        elif kind == 2:
            expression = f"{i % 60} {i % 24} * * *"
        else:
            expression = f"{i % 60} {i % 24} * * {i % 7}"
        pool.append((f"check_{i:04d}", Cron(expression, tz="Europe/Paris" if i % 5 else "UTC")))
    return pool


def parse_time(count: int) -> tuple[float, float, int]:
    with tempfile.TemporaryDirectory() as home:
        manifest = Path(home) / "manifest.json"
        entries = [
            {"name": n, "task_id": n, "clock": clock_spec(c), "owner": "", "module": "bench"}
            for n, c in clocks(count)
        ]
        body = {"version": VERSION, "packages": [], "sources": {}, "checks": entries}
        manifest.write_text(json.dumps(body))
        env = {
            **os.environ,
            "AIRFLOW_HOME": home,
            "DQ_MANIFEST": str(manifest),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "PYTHONPATH": str(ROOT),
        }
        out = subprocess.run(
            [sys.executable, "-c", PARSE, str(ROOT / "dags" / "dq_checks.py")],
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )
        imported, parsed, tasks = out.stdout.split()[-3:]
        return float(imported), float(parsed), int(tasks)


def due_time(count: int, repeats: int = 7) -> tuple[float, int]:
    registry = clocks(count)
    now = dt.datetime(2026, 11, 22, 7, 0, tzinfo=dt.UTC)
    last = {name: now - dt.timedelta(minutes=15) for name, _ in registry}
    timings, due = [], 0
    for _ in range(repeats):
        started = time.perf_counter()
        due = len(due_windows(registry, now, last))
        timings.append(time.perf_counter() - started)
    return statistics.median(timings), due


def run() -> str:
    lines = [
        "| checks | tasks | import airflow (s) | DAG parse (s) | due evaluation (ms) | due |",
        "|---|---|---|---|---|---|",
    ]
    for count in SIZES:
        imported, parsed, tasks = parse_time(count)
        seconds, due = due_time(count)
        lines.append(
            f"| {count} | {tasks} | {imported:.2f} | {parsed:.2f} | {seconds * 1000:.1f} | {due} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    print(run())
