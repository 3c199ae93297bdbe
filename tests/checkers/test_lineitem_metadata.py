"""Issue 30's metadata suite on TPC-H lineitem (tpchgen-cli, SF0.01: 60,175 rows) in Parquet,
Delta (written by deltalake) and Iceberg (written by pyiceberg): Size, Completeness of the 16
columns and Minimum/Maximum of three integer columns, the suite `benchmarks.lakehouse` times,
run no Spark job, come from metadata and equal the scanned values."""

from __future__ import annotations

import subprocess
from typing import Any

import pyarrow.parquet as pq
import pytest

from benchmarks.data import tpchgen_command
from benchmarks.lakehouse import metadata_suite
from checkers.metrics import MetricSource, run_analysis
from checkers.parsers import DeltaParser, IcebergParser, ParquetParser
from tests.checkers.lake_tables import iceberg_catalog
from tests.metrics.jobs import count_jobs

ROWS = 60_175


@pytest.fixture(scope="module")
def lineitem(tmp_path_factory) -> dict[str, Any]:
    from deltalake import write_deltalake

    root = tmp_path_factory.mktemp("tpch")
    command = [tpchgen_command(), "parquet", "-s", "0.01", "--tables=lineitem"]
    subprocess.run([*command, f"--output-dir={root / 'parquet'}"], check=True, capture_output=True)
    rows = pq.read_table(root / "parquet" / "lineitem.parquet")
    write_deltalake(str(root / "delta"), rows)
    catalog, properties = iceberg_catalog(root / "iceberg")
    catalog.create_namespace("tpch")
    catalog.create_table("tpch.lineitem", schema=rows.schema).append(rows)
    return {
        "parquet": ParquetParser(str(root / "parquet")),
        "delta": DeltaParser(str(root / "delta")),
        "iceberg": IcebergParser("tpch.lineitem", "lake", catalog_properties=properties),
    }


@pytest.mark.classic_only  # jobs are counted through the classic status tracker
@pytest.mark.parametrize("fmt", ["parquet", "delta", "iceberg"])
def test_the_lineitem_metadata_suite_runs_no_spark_job_and_equals_the_scan(spark, lineitem, fmt):
    suite = metadata_suite()
    assert len(suite) == 1 + 16 + 6
    data = lineitem[fmt].load(spark)
    answered, jobs = count_jobs(spark, lambda: run_analysis(data, suite))
    scanned, scan_jobs = count_jobs(spark, lambda: run_analysis(data, suite, use_metadata=False))
    assert (jobs, scan_jobs > 0) == (0, True)
    assert answered.bytes_not_read > 0 and scanned.bytes_not_read == 0
    assert {a: m.source for a, m in answered.metrics.items()} == dict.fromkeys(
        suite, MetricSource.METADATA
    )
    assert answered.metric(suite[0]).value == ROWS
    for analyzer in suite:
        assert scanned.metric(analyzer).source is MetricSource.SCAN
        assert answered.metric(analyzer).value == scanned.metric(analyzer).value, analyzer
