"""The Spark session factory: local by default, `DQ_SPARK_MASTER` for a cluster, `DQ_SPARK_REMOTE`
(`sc://host:port`) for Spark Connect. Everything else in dq-checkers takes a session or a
DataFrame."""

from __future__ import annotations

import os
from collections.abc import Mapping

from pyspark.sql import SparkSession

DEFAULT_MASTER = "local[2]"
# Small-machine defaults; anything set in `config` or in Spark's own configuration wins.
DEFAULT_CONFIG = {
    "spark.ui.enabled": "false",
    "spark.sql.shuffle.partitions": "8",
    "spark.sql.session.timeZone": "UTC",
}


def spark_session(
    *,
    app_name: str = "dq-checkers",
    master: str | None = None,
    remote: str | None = None,
    config: Mapping[str, str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> SparkSession:
    """Get or create the process's SparkSession.

    Precedence: explicit `remote`, then explicit `master`, then `DQ_SPARK_REMOTE`, then
    `DQ_SPARK_MASTER`, then a local session on two cores."""
    env = os.environ if environ is None else environ
    remote = remote or (None if master else env.get("DQ_SPARK_REMOTE"))
    builder = SparkSession.builder.appName(app_name)
    settings = dict(config or {})
    if remote:
        builder = builder.remote(remote)
    else:
        builder = builder.master(master or env.get("DQ_SPARK_MASTER") or DEFAULT_MASTER)
        settings = {**DEFAULT_CONFIG, **settings}
    for key, value in settings.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()
