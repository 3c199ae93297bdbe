"""The Spark session factory: local by default, `DQ_SPARK_MASTER` for a cluster, `DQ_SPARK_REMOTE`
(`sc://host:port`) for Spark Connect; Spark's own output goes to a log file (spark_logs.py).
Everything else in dq-checkers takes a session or a DataFrame."""

from __future__ import annotations

import logging
import os
import socket
import sys
import urllib.parse
from collections.abc import Mapping
from pathlib import Path

from pyspark.sql import SparkSession

from checkers.jdbc_drivers import with_driver_jars
from checkers.spark_logs import jvm_output_to, quiet_connect_client, spark_log

DEFAULT_MASTER = "local[2]"
# Small-machine defaults; anything set in `config` or in Spark's own configuration wins.
DEFAULT_CONFIG = {
    "spark.ui.enabled": "false",
    "spark.sql.shuffle.partitions": "8",
    "spark.sql.session.timeZone": "UTC",
    "spark.ui.showConsoleProgress": "false",  # progress bars are noise in a task log
}
#: The driver's log4j2 configuration: Spark's defaults without the task-failure logs that quote
#: malformed records and failed cast values (PII) into the task log.
LOG4J_CONFIG = Path(__file__).with_name("log4j2.properties")
#: PySpark's Python loggers that print a failed query's full message (the quoted values) on
#: stderr; the message reaches dq-checkers as an exception anyway.
QUERY_CONTEXT_LOGGERS = ("SQLQueryContextLogger", "DataFrameQueryContextLogger")
DEFAULT_CONNECT_PORT = 15002
#: Seconds to wait for a Spark Connect server to accept a connection before giving up.
CONNECT_TIMEOUT_S = 10.0


def spark_target(
    *,
    master: str | None = None,
    remote: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> tuple[str, str]:
    """Where a session should run: ("remote", url) for Spark Connect or ("master", url).

    Precedence: explicit `remote`, then explicit `master`, then `DQ_SPARK_REMOTE`, then
    `DQ_SPARK_MASTER`, then a local session on two cores."""
    # Not from scheduling.config: a session is built wherever one is first needed (the pytest
    # plugin, notebooks, a run's evaluation), with no Settings in reach.
    env = os.environ if environ is None else environ
    if remote:
        return ("remote", remote)
    if master:
        return ("master", master)
    if env.get("DQ_SPARK_REMOTE"):
        return ("remote", env["DQ_SPARK_REMOTE"])
    return ("master", env.get("DQ_SPARK_MASTER") or DEFAULT_MASTER)


def spark_session(
    *,
    app_name: str = "dq-checkers",
    master: str | None = None,
    remote: str | None = None,
    config: Mapping[str, str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> SparkSession:
    """Get or create the process's SparkSession (see `spark_target` for where it runs).

    Sessions whose driver runs in this process (local, a cluster, a local Spark Connect server)
    get small-machine defaults (UI off, few shuffle partitions, UTC) unless `config` says
    otherwise, our log4j2 configuration and the installed JDBC driver jars (jdbc_drivers.py); a
    remote Spark Connect server's session takes `config` as it is. The driver's output goes to
    `spark_log()` (stderr under Airflow)."""
    kind, url = spark_target(master=master, remote=remote, environ=environ)
    if kind == "remote":
        require_connect_server(url)
    log = spark_log(environ)
    builder = SparkSession.builder.appName(app_name)
    settings = dict(config or {})
    builder = builder.remote(url) if kind == "remote" else builder.master(url)
    driver_here = kind == "master" or not url.startswith("sc://")
    if driver_here:
        settings = {**DEFAULT_CONFIG, **settings}
        if url.startswith("local"):
            # Python predicates run in worker processes: give them this interpreter (its packages).
            # Outside spark-submit, PySpark reads only PYSPARK_PYTHON (else `python3` on PATH).
            settings.setdefault("spark.pyspark.python", sys.executable)
            os.environ.setdefault("PYSPARK_PYTHON", settings["spark.pyspark.python"])
        if jars := with_driver_jars(settings.get("spark.jars", ""), environ):
            settings["spark.jars"] = jars  # JDBC drivers (jdbc_drivers.py)
        settings["spark.driver.extraJavaOptions"] = driver_java_options(
            settings.get("spark.driver.extraJavaOptions", "")
        )
    if kind == "remote":
        quiet_connect_client(log)
    for key, value in settings.items():
        builder = builder.config(key, value)
    quiet_query_context_loggers()
    starts_driver = driver_here and SparkSession.getActiveSession() is None
    with jvm_output_to(log if starts_driver else None):
        return builder.getOrCreate()


def require_connect_server(url: str, *, timeout_s: float = CONNECT_TIMEOUT_S) -> None:
    """Raise ConnectionError, naming the server, when nothing accepts connections at an `sc://`
    URL: the Connect client would otherwise retry for many minutes before saying anything."""
    if not url.startswith("sc://"):
        return
    parsed = urllib.parse.urlparse(url)
    host, port = parsed.hostname or "localhost", parsed.port or DEFAULT_CONNECT_PORT
    try:
        socket.create_connection((host, port), timeout=timeout_s).close()
    except OSError as exc:
        raise ConnectionError(
            f"no Spark Connect server answers at {host}:{port} ({exc}): start it "
            "(docs/deployment.md) or fix DQ_SPARK_REMOTE"
        ) from exc


def driver_java_options(options: str) -> str:
    """`options` plus our log4j2 configuration, unless they name a configuration of their own."""
    if "log4j2.configurationFile" in options or "log4j.configuration" in options:
        return options
    return f"{options} -Dlog4j2.configurationFile={LOG4J_CONFIG.as_uri()}".strip()


def quiet_query_context_loggers() -> None:
    """Silence PySpark's loggers that print a failed query's message with the data it quotes."""
    from pyspark.logger import PySparkLogger

    for name in QUERY_CONTEXT_LOGGERS:
        PySparkLogger.getLogger(name).setLevel(logging.CRITICAL)
