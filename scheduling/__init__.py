"""Scheduling: clocks, due windows, the runner (`run_check`, `run_due`), run history, the local
scheduler and the `dq` command line. Clocks import nothing heavy (the DAG uses them at run time
gates); the runner imports Spark only when something runs."""

from scheduling.clocks import Clock, Cron, Every

__all__ = ["Clock", "Cron", "Every", "run_check", "run_due"]


def __getattr__(name: str) -> object:
    if name in ("run_check", "run_due"):
        from scheduling import runner

        return getattr(runner, name)
    raise AttributeError(f"module 'scheduling' has no attribute {name!r}")
