"""Scheduling: clocks, due windows, claims, the runner (`run_check`, `run_due`), outages and run
history; `config` reads the environment and dq.toml once and `settings` builds a run's settings
from it. Below it by audience: `cli/` (the `dq` command), `report/` (the HTML report) and
`airflow/` (the DAG's manifest and tasks). Clocks import nothing heavy (the DAG uses them at run
time gates); the runner imports Spark only when something runs."""

from scheduling.clocks import Clock, Cron, Every

__all__ = ["Clock", "Cron", "Every", "run_check", "run_due"]


def __getattr__(name: str) -> object:
    if name in ("run_check", "run_due"):
        from scheduling import runner

        return getattr(runner, name)
    raise AttributeError(f"module 'scheduling' has no attribute {name!r}")
