"""Spark's event logs count applications, jobs and source reads of a driver in another process:
a local session from our factory (checkers/spark.py) honours SPARK_CONF_DIR."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from tests.dags.spark_events import EventLogs, reads_of

ROOT = Path(__file__).resolve().parents[2]
DRIVER = """
import sys
from checkers.spark import spark_session

spark = spark_session(app_name="events-probe")
a = spark.read.parquet(sys.argv[1])
b = spark.read.csv(sys.argv[2], header=True, schema="n int")
print(a.count(), a.agg({"n": "max"}).first()[0], b.count())
spark.createDataFrame([(1,)], "x int").count()  # in-memory data: no source read
spark.stop()
"""


def test_two_reads_of_one_source_and_one_of_another_in_one_application(tmp_path):
    a, b = tmp_path / "a.parquet", tmp_path / "b.csv"
    pq.write_table(pa.table({"n": [1, 2, 3]}), a)
    b.write_text("n\n1\n2\n")
    logs = EventLogs.create(tmp_path / "spark")
    env = {**os.environ, **logs.env(), "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(DRIVER), str(a), str(b)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split() == ["3", "3", "2"]

    (application,) = logs.applications()
    assert application.name == "events-probe"
    assert application.jobs >= 3  # one per action at least (adaptive execution adds some)
    assert dict(application.reads) == {str(a): 2, str(b): 1}
    reads = logs.reads()
    assert (reads_of(reads, a), reads_of(reads, b), reads_of(reads, tmp_path)) == (2, 1, 3)
