"""python -m benchmarks.airflow_tick [--designs dq_run new today] [--new-dag PATH] [--keep DIR]
                                   [--failures]

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
import statistics
import subprocess
import sys
import tempfile
from dataclasses import replace
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


def run_design(
    design: str,
    work: Path,
    package_dir: Path,
    clocks: list[tuple[str, str]],
    args: argparse.Namespace,
) -> Tick | None:
    if design == "dq_run":
        return dq_run_due(work, package_dir)
    if design == "new" and not is_new_design(args.new_dag):
        print(f"new design skipped: {args.new_dag} does not read DQ_DAG_START yet")
        return None
    new = design == "new"
    work.mkdir(parents=True, exist_ok=True)
    manifest = (
        new_manifest(work / "manifest.json", package_dir)
        if new
        else deployment.write_todays_manifest(work / "manifest.json", clocks)
    )
    return under_airflow(
        "new design" if new else "today's design (one driver per check)",
        work,
        package_dir,
        dag_file=args.new_dag if new else TODAY,
        dag_id=args.new_dag_id if new else TODAY_DAG_ID,
        manifest=manifest,
        parallelism=args.parallelism,
        timeout_s=args.timeout,
    )


def combine(runs: list[Tick]) -> Tick:
    """The median run's wall time; the counts of the first run (the others' if they differ)."""
    seconds = sorted(t.seconds for t in runs)
    first = runs[0]
    notes = first.notes
    if len(runs) > 1:
        notes = f"median of {len(runs)} ({seconds[0]:.0f}-{seconds[-1]:.0f} s); {notes}"
    differing = {(t.applications, sum(t.reads.values()), t.checks_run) for t in runs}
    if len(differing) > 1:
        notes += f"; counts differ between runs: {sorted(differing)}"
    return replace(first, seconds=statistics.median(seconds), notes=notes)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--designs", nargs="*", default=["dq_run", "new", "today"])
    parser.add_argument("--runs", type=int, default=3, help="of dq_run and new, in turns")
    parser.add_argument("--new-dag", type=Path, default=ROOT / "dags" / "dq_checks.py")
    parser.add_argument("--new-dag-id", default="dq_checks")
    parser.add_argument("--parallelism", type=int, default=4)
    parser.add_argument("--timeout", type=float, default=3 * 3600, help="per Airflow tick (s)")
    parser.add_argument("--keep", type=Path, help="work here and keep it (logs, databases)")
    parser.add_argument(
        "--failures",
        action="store_true",
        help="add four red checks due at midnight: CRITICAL, ERROR level, could not run, broken",
    )
    args = parser.parse_args()
    unknown = set(args.designs) - {"dq_run", "new", "today"}
    if unknown:
        parser.error(f"unknown designs {sorted(unknown)}")

    work = args.keep or Path(tempfile.mkdtemp(prefix="airflow-tick-"))
    work.mkdir(parents=True, exist_ok=True)
    sources = deployment.write_sources(DATA)
    package_dir = work / "package"
    clocks = deployment.write_check_package(package_dir, sources, failures=args.failures)
    print(f"{len(clocks)} checks over {len(sources)} sources in {package_dir}; work in {work}")
    measured: dict[str, list[Tick]] = {}
    for index in range(args.runs):
        for design in args.designs:
            if design == "today" and index > 0:
                continue  # one driver per check takes long: one run
            tick = run_design(design, work / f"{design}-{index}", package_dir, clocks, args)
            if tick is not None:
                measured.setdefault(design, []).append(tick)
                print(render([tick]), flush=True)
    print()
    print(render([combine(runs) for runs in measured.values()]))


if __name__ == "__main__":
    main()
