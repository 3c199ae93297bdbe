"""python -m benchmarks.airflow_tick [--designs dq_run new today] [--new-dag PATH] [--keep DIR]

The midnight tick (the data interval (23:45, 00:00] UTC) of a synthetic deployment (see
deployment.py), three ways, each on a fresh project database:

* today's design: one_driver_per_check.py, a task group per check and a Spark driver per due check;
* the new design: the DAG file given by --new-dag (default dags/dq_checks.py), which reads
  DQ_MANIFEST and DQ_DAG_START/END/CATCHUP; skipped while that file is still today's design;
* `dq run --due --at <midnight>` in one process.

Airflow runs on the stand of tests/dags/airflow_stand.py: SQLite metadata database, LocalExecutor
with `[core] parallelism` 4 (--parallelism), two cores. Prints one table; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks._harness import table
from benchmarks.airflow_tick import deployment
from benchmarks.airflow_tick.designs import ROOT, Tick, dq_run_due, under_airflow

DATA = ROOT / "benchmarks" / "data" / "airflow_tick"
TODAY = Path(__file__).with_name("one_driver_per_check.py")
TODAY_DAG_ID = "dq_checks_one_driver_per_check"


def is_new_design(dag_file: Path) -> bool:
    """The new DAG replays chosen intervals (DQ_DAG_START); today's does not."""
    return dag_file.exists() and "DQ_DAG_START" in dag_file.read_text()


def new_manifest(path: Path, package_dir: Path) -> Path:
    """The manifest as the checkout's `dq manifest --out` writes it (the new DAG's format)."""
    env = {**os.environ, "DQ_CHECKS": deployment.PACKAGE, "PYTHONPATH": f"{package_dir}:{ROOT}"}
    command = [sys.executable, "-m", "scheduling.cli", "manifest", "--out", str(path)]
    subprocess.run(command, env=env, check=True, capture_output=True)
    return path


def render(ticks: list[Tick]) -> str:
    baseline = next((t.seconds for t in ticks if t.design.startswith("`dq run")), None)
    rows = []
    for tick in ticks:
        reads = tick.reads
        most = max(reads.values(), default=0)
        ratio = f"{tick.seconds / baseline:.2f}" if baseline else ""
        rows.append(
            [
                tick.design,
                f"{tick.seconds:.1f}",
                tick.applications,
                f"{sum(reads.values())} ({len(reads)} sources, at most {most} each)",
                tick.checks_run,
                ratio,
                tick.notes,
            ]
        )
    headers = [
        "design",
        "wall time (s)",
        "Spark applications",
        "source reads",
        "checks run",
        "time / `dq run --due`",
        "notes",
    ]
    return table(headers, rows)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--designs", nargs="*", default=["dq_run", "new", "today"])
    parser.add_argument("--new-dag", type=Path, default=ROOT / "dags" / "dq_checks.py")
    parser.add_argument("--new-dag-id", default="dq_checks")
    parser.add_argument("--parallelism", type=int, default=4)
    parser.add_argument("--timeout", type=float, default=3 * 3600, help="per Airflow tick (s)")
    parser.add_argument("--keep", type=Path, help="work here and keep it (logs, databases)")
    args = parser.parse_args()

    work = args.keep or Path(tempfile.mkdtemp(prefix="airflow-tick-"))
    work.mkdir(parents=True, exist_ok=True)
    sources = deployment.write_sources(DATA)
    package_dir = work / "package"
    clocks = deployment.write_check_package(package_dir, sources)
    print(f"{len(clocks)} checks over {len(sources)} sources in {package_dir}; work in {work}")
    ticks: list[Tick] = []
    for design in args.designs:
        if design == "dq_run":
            ticks.append(dq_run_due(work / "dq_run", package_dir))
        elif design == "new" and not is_new_design(args.new_dag):
            print(f"new design skipped: {args.new_dag} does not read DQ_DAG_START yet")
            continue
        elif design in ("new", "today"):
            new = design == "new"
            home = work / design
            home.mkdir(parents=True, exist_ok=True)
            manifest = (
                new_manifest(home / "manifest.json", package_dir)
                if new
                else deployment.write_todays_manifest(home / "manifest.json", clocks)
            )
            ticks.append(
                under_airflow(
                    "new design" if new else "today's design (one driver per check)",
                    home,
                    package_dir,
                    dag_file=args.new_dag if new else TODAY,
                    dag_id=args.new_dag_id if new else TODAY_DAG_ID,
                    manifest=manifest,
                    parallelism=args.parallelism,
                    timeout_s=args.timeout,
                )
            )
        else:
            parser.error(f"unknown design {design!r}")
        print(render(ticks[-1:]), flush=True)
    print()
    print(render(ticks))


if __name__ == "__main__":
    main()
