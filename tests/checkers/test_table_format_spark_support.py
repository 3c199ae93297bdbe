"""Where the session has a table format's own Spark support (a `delta` or `iceberg` data source),
DeltaParser and IcebergParser read through it, pinned to the version whose statistics they
hold: a table with deletion vectors or delete files is then read with those rows gone instead
of refused, and its metrics are scanned (the files' counts include the deleted rows). Without
that support the direct read's ERROR stands; `spark_support=True` requires it."""

from __future__ import annotations

import datetime as dt

import pytest

from checkers import MetricChecker, Status
from checkers.metrics import Check, CheckLevel, Completeness, MetricSource, Size, run_analysis
from checkers.parsers import DeltaParser, IcebergParser, SourceError
from checks import QualityCheck
from scheduling.tick.evaluate import evaluate_checks
from tests.checkers import lake_tables as lake
from tests.checkers.format_sources import session_with_format_support
from tests.checkers.lake_tables import DAYS

# a new session of the test application holds the data sources: the classic API (newSession)
pytestmark = pytest.mark.classic_only

NOW = dt.datetime(2024, 4, 1, tzinfo=dt.UTC)


@pytest.fixture(scope="module")
def supported(spark):  # type: ignore[no-untyped-def]
    return session_with_format_support(spark)


@pytest.fixture(scope="module")
def deleted(tmp_path_factory) -> str:
    """One day's 8 orders in Delta, rows 0 and 3 then deleted by a deletion vector."""
    path = tmp_path_factory.mktemp("dv") / "orders"
    lake.write_delta(path, DAYS[:1])
    lake.delete_with_deletion_vector(path, [0, 3])
    return str(path)


def _sized(source) -> type[QualityCheck]:  # type: ignore[no-untyped-def]
    class Orders(QualityCheck, register=False):
        name = "orders"
        parser = source

        def checker(self, orders):  # type: ignore[no-untyped-def]
            check = Check(CheckLevel.ERROR, "rows").has_size(lambda n: n == 6)
            return MetricChecker(orders, [check])

    return Orders


def test_deletion_vectors_are_honoured_through_the_sessions_delta_support(supported, deleted):
    data = DeltaParser(deleted).load(supported)
    result = run_analysis(data, [Size(), Completeness("note")])
    # rows 0 and 3 are gone; of the 6 left, row 6's note is the NULL one
    assert result.metric(Size()).value == 6
    assert result.metric(Completeness("note")).value == pytest.approx(5 / 6)
    # the log's counts include the deleted rows: nothing is answered from them
    assert {m.source for m in result.metrics.values()} == {MetricSource.SCAN}
    [outcome] = evaluate_checks([_sized(DeltaParser(deleted))], spark=supported, now=NOW)
    assert outcome.status is Status.PASSED, outcome.summary()


def test_the_read_is_pinned_to_the_version_the_parser_inspected(supported, deleted):
    assert DeltaParser(deleted, version=0).load(supported).count() == 8  # before the delete


def test_without_the_support_the_direct_reads_error_stands(spark, supported, deleted):
    with pytest.raises(SourceError, match=r"deletion vectors .*delta-spark"):
        DeltaParser(deleted, spark_support=False).load(supported)
    with pytest.raises(SourceError, match=r"no delta data source \(spark_support=True\)"):
        DeltaParser(deleted, spark_support=True).load(spark)
    [outcome] = evaluate_checks([_sized(DeltaParser(deleted))], spark=spark, now=NOW)
    assert outcome.status is Status.ERROR and "deletion vectors" in (outcome.error or "")


def test_delete_files_are_honoured_through_the_sessions_iceberg_support(spark, supported, tmp_path):
    catalog, properties = lake.iceberg_catalog(tmp_path / "iceberg")
    table = lake.write_iceberg(catalog, "shop.deleted", DAYS[:1])
    lake.add_position_delete(table, tmp_path, position=0)
    parser = IcebergParser("shop.deleted", "lake", catalog_properties=properties)
    data = parser.load(supported)
    assert sorted(r.id for r in data.select("id").collect()) == list(range(101, 108))
    assert run_analysis(data, [Size()]).metric(Size()).source is MetricSource.SCAN
    with pytest.raises(SourceError, match=r"1 delete files .*iceberg-spark-runtime"):
        parser.load(spark)


def test_a_table_the_direct_read_honours_keeps_its_metadata_answers(supported, tmp_path):
    lake.write_delta(tmp_path / "orders", DAYS)
    data = DeltaParser(str(tmp_path / "orders")).load(supported)
    result = run_analysis(data, [Size(), Completeness("note")])
    assert result.metric(Size()).value == 24
    assert {m.source for m in result.metrics.values()} == {MetricSource.METADATA}
    assert result.metric(Completeness("note")).value == data.filter("note IS NOT NULL").count() / 24
