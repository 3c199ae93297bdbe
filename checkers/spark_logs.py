"""Where Spark's own output goes. The JVM's logs, progress bars and stack traces would bury a run's
results, so by default they go to `$DQ_STATE_DIR/logs/spark.log`, inside an Airflow task too
(Airflow logs a task's stderr at ERROR, where they would hide the failed outcomes);
`DQ_SPARK_LOG=stderr` keeps them on the console (debugging), `DQ_SPARK_LOG=<path>` names another
file."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from checkers.private_files import PRIVATE_FILE, private_directory

SPARK_LOG_ENV = "DQ_SPARK_LOG"
CONSOLE = "stderr"
#: The same variables as scheduling.airflow.worker_config (checkers may not import scheduling).
STATE_DIR_ENV, DEFAULT_STATE_DIR = "DQ_STATE_DIR", ".dq"
#: A log past this size is moved to `<name>.1` (one generation kept) before a JVM starts.
ROTATE_BYTES = 16 * 2**20
#: PySpark's Connect client draws its own progress bar when this is "1" (pyspark.sql.connect.shell).
CONNECT_PROGRESS_ENV = "SPARK_CONNECT_PROGRESS_BAR_ENABLED"


def log_dir(environ: Mapping[str, str] | None = None) -> Path:
    """`$DQ_STATE_DIR/logs`: Spark's log and the tracebacks of crashed `dq` commands."""
    # Read here: a crash report must be written even when reading the configuration failed.
    env = os.environ if environ is None else environ
    return Path(env.get(STATE_DIR_ENV) or DEFAULT_STATE_DIR).absolute() / "logs"


def spark_log(environ: Mapping[str, str] | None = None) -> Path | None:
    """The file Spark's output goes to, or None to leave it on stderr."""
    env = os.environ if environ is None else environ
    chosen = env.get(SPARK_LOG_ENV, "").strip()
    if chosen.lower() == CONSOLE:
        return None
    if chosen:
        return Path(chosen).absolute()
    return log_dir(env) / "spark.log"


@contextmanager
def jvm_output_to(path: Path | None) -> Iterator[None]:
    """Point this process's stderr at `path` while a Spark session is built: a JVM started
    meanwhile inherits it and writes its log4j logs (our log4j2.properties, data withheld),
    progress bars, launcher warnings and uncaught exceptions there for its whole life, while
    this process gets its stderr back. A log4j appender alone would miss all but the logs."""
    if path is None:
        yield
        return
    try:
        target = _open_log(path)
    except OSError as exc:
        print(f"dq: Spark's output stays on stderr: cannot write {path}: {exc}", file=sys.stderr)
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    os.dup2(target, 2)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        os.close(target)


def _open_log(path: Path) -> int:
    from checkers.project_db import utc_now

    private_directory(path.parent)
    if path.exists() and path.stat().st_size > ROTATE_BYTES:
        os.replace(path, path.with_name(path.name + ".1"))
    target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, PRIVATE_FILE)
    command = " ".join(sys.argv)
    os.write(target, f"--- {utc_now().isoformat()} pid {os.getpid()}: {command}\n".encode())
    return target


def quiet_connect_client(path: Path | None) -> None:
    """With Spark's output in a file, the Spark Connect client draws no progress bar either."""
    if path is not None:
        os.environ[CONNECT_PROGRESS_ENV] = "0"
