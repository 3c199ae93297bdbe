"""A bug in dq itself: one line on stderr that says so, the traceback in `$DQ_STATE_DIR/logs/dq.log`
(also on stderr with DQ_SPARK_LOG=stderr), and
exit code 70, apart from every code a check's result can give."""

from __future__ import annotations

import os
import sys
import traceback
from pathlib import Path

from checkers.private_files import private_file
from checkers.project_db import utc_now
from checkers.spark_logs import log_dir, spark_log
from scheduling.cli.exits import EXIT_CRASH

CRASH_LOG = "dq.log"


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    text = lines[0] if lines else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _write(path: Path, text: str) -> bool:
    try:
        with private_file(path).open("a", encoding="utf-8") as log:
            log.write(text)
        return True
    except OSError:
        return False


def crashed(command: str, exc: BaseException) -> int:
    """Report `exc`, which ended `dq <command>`; returns the exit code."""
    trace = "".join(traceback.format_exception(exc))
    path = log_dir() / CRASH_LOG
    header = f"--- {utc_now().isoformat()} pid {os.getpid()}: dq {command} crashed\n"
    kept = _write(path, header + trace)
    if spark_log() is None or not kept:
        print(trace, end="", file=sys.stderr)
    where = f"traceback in {path}" if kept else "traceback above"
    spark = spark_log()
    if type(exc).__module__.startswith(("pyspark", "py4j")) and spark is not None:
        where += f"; Spark's own output in {spark}"  # e.g. why the JVM did not start
    print(f"dq {command} crashed: {_first_line(exc)}; {where}", file=sys.stderr, flush=True)
    return EXIT_CRASH
