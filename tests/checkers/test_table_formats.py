"""Delta and Iceberg tables read by Spark's Parquet reader over exactly their snapshot's files: a
check gives the outcome it gives on the same rows in plain Parquet; metrics the files' metadata
answers exactly cost no Spark job and equal the scanned values; features the direct read cannot
honour are errors naming them."""

from __future__ import annotations

import datetime as dt
import sys

import pytest

from checkers import MetricChecker, PredicateSingleDatasetChecker, Status
from checkers.metrics import (
    Check,
    CheckLevel,
    Completeness,
    Maximum,
    MetricSource,
    Minimum,
    Size,
    run_analysis,
)
from checkers.parsers import DeltaParser, IcebergParser, ParquetParser, SourceError
from checks import QualityCheck
from scheduling.drift import differences
from scheduling.tick.evaluate import evaluate_checks
from tests.checkers.lake_tables import (
    DAYS,
    add_position_delete,
    delete_with_deletion_vector,
    iceberg_catalog,
    write_delta,
    write_iceberg,
    write_parquet,
)
from tests.metrics.jobs import count_jobs

NOW = dt.datetime(2024, 4, 1, tzinfo=dt.UTC)
COLUMNS = ("id", "qty", "price", "ratio", "note", "day")


@pytest.fixture(scope="module")
def lake(tmp_path_factory) -> dict[str, object]:
    root = tmp_path_factory.mktemp("lake")
    write_delta(root / "delta", DAYS)
    catalog, properties = iceberg_catalog(root / "iceberg")
    write_iceberg(catalog, "shop.orders", DAYS)
    write_parquet(root / "parquet", DAYS)
    return {
        "delta": DeltaParser(str(root / "delta")),
        "iceberg": IcebergParser("shop.orders", "lake", catalog_properties=properties),
        "parquet": ParquetParser(str(root / "parquet")),
        "catalog": catalog,
        "properties": properties,
        "root": root,
    }


def _checks(source) -> list[type[QualityCheck]]:
    class OrderMetrics(QualityCheck, register=False):
        name = "order_metrics"
        parser = source

        def checker(self, orders):
            return MetricChecker(
                orders,
                [
                    Check(CheckLevel.ERROR, "orders")
                    .has_size(lambda n: n == 24)
                    .is_complete("note")  # fails: every third note is NULL
                    .has_min("qty", lambda v: v >= 0)  # fails: -1
                    .has_max("price", lambda v: v < 100)
                    .has_mean("ratio", lambda v: v > 1)
                ],
            )

    class PositiveQuantities(QualityCheck, register=False):
        name = "positive_quantities"
        parser = source

        def checker(self, orders):
            return PredicateSingleDatasetChecker(orders, "qty > 0", key="id")

    return [OrderMetrics, PositiveQuantities]


@pytest.mark.connect  # the direct read of the files, and the probe for the format's data source
@pytest.mark.parametrize("fmt", ["delta", "iceberg"])
def test_a_check_on_a_table_format_gives_the_outcome_of_the_same_rows_in_parquet(spark, lake, fmt):
    mine = evaluate_checks(_checks(lake[fmt]), spark=spark, now=NOW)
    plain = evaluate_checks(_checks(lake["parquet"]), spark=spark, now=NOW)
    for table, parquet in zip(mine, plain, strict=True):
        assert table.error is None, table.error
        assert "bytes_not_read" not in table.reading  # both checks needed a scan (mean, rows)
        assert table.failing > 0
        assert differences(table, parquet) == []
        assert table.failing_keys == parquet.failing_keys


SUITE = [
    Size(),
    *(Completeness(c) for c in COLUMNS),
    *(kind(c) for c in ("id", "qty", "price") for kind in (Minimum, Maximum)),
]


@pytest.mark.classic_only  # jobs are counted through the classic status tracker
@pytest.mark.parametrize("fmt", ["delta", "iceberg", "parquet"])
def test_the_metadata_suite_runs_no_spark_job_and_equals_the_scan(spark, lake, fmt):
    data = lake[fmt].load(spark)
    answered, jobs = count_jobs(spark, lambda: run_analysis(data, SUITE))
    scanned = run_analysis(data, SUITE, use_metadata=False)
    assert jobs == 0
    assert answered.bytes_not_read > 0 and scanned.bytes_not_read == 0
    # Delta keeps the partition column's values in its log: exact too
    assert {a: m.source for a, m in answered.metrics.items()} == dict.fromkeys(
        SUITE, MetricSource.METADATA
    )
    for analyzer in SUITE:
        assert answered.metric(analyzer).value == scanned.metric(analyzer).value, analyzer
        assert scanned.metric(analyzer).source is MetricSource.SCAN


@pytest.mark.classic_only
def test_what_metadata_cannot_answer_is_scanned_alone(spark, lake):
    data = lake["delta"].load(spark)
    mixed = [Size(), Maximum("ratio"), Completeness("note", where="qty > 0")]
    result, jobs = count_jobs(spark, lambda: run_analysis(data, mixed))
    assert jobs == 1  # one scan for the double's maximum (NaN) and the filtered completeness
    assert [result.metric(a).source for a in mixed] == [
        MetricSource.METADATA,
        MetricSource.SCAN,
        MetricSource.SCAN,
    ]
    assert result.bytes_not_read == 0


def test_a_delta_table_with_column_mapping_is_an_error_naming_it(spark, tmp_path):
    write_delta(tmp_path / "mapped", DAYS[:1], configuration={"delta.columnMapping.mode": "name"})
    with pytest.raises(SourceError, match=r"column mapping .*delta-spark"):
        DeltaParser(str(tmp_path / "mapped")).load(spark)


def test_a_delta_table_with_deletion_vectors_is_an_error_naming_them(spark, tmp_path):
    import pyarrow as pa
    from deltalake import DeltaTable

    path = tmp_path / "deleted"
    write_delta(path, DAYS[:1])
    delete_with_deletion_vector(path, [0, 3])
    # a reader that honours the vector (delta-rs's kernel) sees rows 0 and 3 gone, 6 of 8 left
    [marked] = pa.table(DeltaTable(str(path)).deletion_vectors().read_all()).to_pylist()
    assert marked["selection_vector"].count(True) == 6
    parser = DeltaParser(str(path))
    with pytest.raises(SourceError, match=r"deletion vectors on 1 data files .*delta-spark"):
        parser.load(spark)
    # in a run: an ERROR naming the feature and the fix, never a pass or a failed check
    [outcome] = evaluate_checks(_checks(parser)[:1], spark=spark, now=NOW)
    assert outcome.status is Status.ERROR, outcome.summary()
    assert "deletion vectors" in (outcome.error or "") and "delta-spark" in (outcome.error or "")
    # the version before the delete has no vector: read as usual
    assert DeltaParser(str(path), version=0).load(spark).count() == 8


def test_an_iceberg_table_with_delete_files_is_an_error_naming_them(spark, lake):
    table = write_iceberg(lake["catalog"], "shop.deleted", DAYS[:1])
    add_position_delete(table, lake["root"] / "iceberg", position=0)
    assert len(table.scan().to_arrow()) == 7  # pyiceberg applies it: a Parquet read would not
    parser = IcebergParser("shop.deleted", "lake", catalog_properties=lake["properties"])
    with pytest.raises(SourceError, match=r"1 delete files .*iceberg-spark-runtime"):
        parser.load(spark)


def test_an_iceberg_table_with_a_renamed_column_is_an_error_naming_it(spark, lake):
    table = write_iceberg(lake["catalog"], "shop.renamed", DAYS[:1])
    with table.update_schema() as update:
        update.rename_column("note", "remark")
    parser = IcebergParser("shop.renamed", "lake", catalog_properties=lake["properties"])
    with pytest.raises(SourceError, match=r"'note' renamed to 'remark'"):
        parser.load(spark)


def test_a_missing_extra_is_an_error_naming_it(spark, lake, monkeypatch):
    monkeypatch.setitem(sys.modules, "deltalake", None)  # as if not installed
    monkeypatch.setitem(sys.modules, "pyiceberg.catalog", None)
    with pytest.raises(SourceError, match=r"dq-checkers\[delta\]"):
        lake["delta"].load(spark)
    with pytest.raises(SourceError, match=r"dq-checkers\[iceberg\]"):
        lake["iceberg"].load(spark)
