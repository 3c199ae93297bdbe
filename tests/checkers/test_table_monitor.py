"""Monitors for every table under a lake path, from metadata alone: 50 tables (Delta and Parquet
directories) with daily loads, of which one stops arriving and one shrinks by half, fail with
exactly those two and no Spark job; tables loaded on business days only are not late on a
Monday morning; schema changes, tables added later and unreadable tables; an Iceberg
namespace's tables timed by their snapshots; a Spark catalog database's tables (saveAsTable)
from the catalog and their files' metadata, with no Spark job."""

from __future__ import annotations

import datetime as dt
import zlib
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from checkers import KnownBroken
from checkers.table_monitor import (
    CatalogDatabase,
    IcebergNamespace,
    LakeRoot,
    TableMonitor,
    TablesUnder,
)
from checks import QualityCheck
from scheduling.tick.evaluate import evaluate_checks
from tests.metrics.jobs import count_jobs

MONDAY = dt.datetime(2026, 3, 2, 6, tzinfo=dt.UTC)  # the run: Monday morning
DAYS = [MONDAY.date() - dt.timedelta(days=n) for n in range(35, 0, -1)]  # through Sunday
STOPPED, SHRUNK = "delta/t07", "parquet/t38"
BUSINESS = {"delta/t03", "parquet/t31"}  # loaded Monday to Friday only


def _rows(name: str, day: dt.date) -> int:
    if name == SHRUNK and day == DAYS[-1]:
        return 10
    return 20 + zlib.crc32(f"{name}{day}".encode()) % 5 - 2  # 18 to 22 rows a day


def _days(name: str) -> list[dt.date]:
    if name == STOPPED:
        return [d for d in DAYS if d <= DAYS[-4]]  # nothing since Thursday
    if name in BUSINESS:
        return [d for d in DAYS if d.weekday() < 5]
    return DAYS


def _table(name: str, days: list[dt.date], extra: str | None = None) -> pa.Table:
    counts = [_rows(name, d) for d in days]
    columns = {
        "id": pa.array(range(sum(counts)), pa.int64()),
        "day": pa.array(
            [d.isoformat() for d, n in zip(days, counts, strict=True) for _ in range(n)]
        ),
    }
    if extra:
        columns[extra] = pa.array(["x"] * sum(counts))
    return pa.table(columns)


def _write(root: Path, name: str, data: pa.Table) -> None:
    from deltalake import write_deltalake

    if name.startswith("delta/"):
        write_deltalake(
            str(root / name), data, partition_by=["day"], mode="append", schema_mode="merge"
        )
    else:
        pq.write_to_dataset(data, str(root / name), partition_cols=["day"])


@pytest.fixture(scope="module")
def lake(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("lake")
    for n in range(50):
        name = f"{'delta' if n < 25 else 'parquet'}/t{n:02d}"
        _write(root, name, _table(name, _days(name)))
    return root


@pytest.mark.classic_only  # jobs are counted through the classic status tracker
def test_fifty_tables_fail_with_exactly_the_late_one_and_the_shrunk_one_with_no_spark_job(
    spark, lake
):
    result, jobs = count_jobs(spark, TableMonitor(LakeRoot(str(lake)), now=MONDAY).run)
    assert jobs == 0
    assert (result.total, result.failing, result.reading["rows_read"]) == (50, 2, 0)
    assert result.failing_keys() == [STOPPED, SHRUNK]
    problems = {r["table"]: r["problem"] for r in result.sample()}
    assert problems == {STOPPED: "late", SHRUNK: "volume"}
    assert "10 rows" in next(str(r["detail"]) for r in result.sample() if r["table"] == SHRUNK)
    # business-day tables end on Friday: a cadence blind to weekdays would call them late
    assert not BUSINESS & set(result.failing_keys())


@pytest.mark.classic_only
def test_a_monitor_check_runs_in_a_tick_with_no_spark_job(spark, lake):
    root = LakeRoot(str(lake))

    class LakeTables(QualityCheck, register=False):
        name = "lake_tables"
        parser = TablesUnder(root)

        def checker(self, _tables):
            return TableMonitor(root, now=self.now)

    [outcome], jobs = count_jobs(spark, lambda: evaluate_checks([LakeTables], now=MONDAY))
    assert jobs == 0
    assert (outcome.status.value, outcome.failing, outcome.total) == ("failed", 2, 50)
    assert outcome.failing_keys == (STOPPED, SHRUNK)
    assert outcome.reading == {"rows_read": 0}


def test_a_late_table_is_excused_by_name_and_freshness_can_be_left_unwatched(lake):
    excused = TableMonitor(LakeRoot(str(lake)), now=MONDAY).run(KnownBroken([STOPPED]))
    assert (excused.failing, excused.unexcused) == (2, 1)
    volume_only = TableMonitor(LakeRoot(str(lake)), now=MONDAY, watch=("volume",)).run()
    assert volume_only.failing_keys() == [SHRUNK]


def test_schema_changes_new_tables_and_unreadable_tables(tmp_path):
    root = tmp_path / "lake"
    _write(root, "delta/orders", _table("delta/orders", DAYS[:-1]))
    _write(root, "delta/orders", _table("delta/orders", DAYS[-1:], extra="channel"))
    _write(root, "parquet/events", _table("parquet/events", DAYS[:-1]))
    monitor = TableMonitor(LakeRoot(str(root)), now=MONDAY)
    first = monitor.run()
    assert (first.total, first.failing_keys()) == (2, ["delta/orders"])
    assert first.sample()[0]["detail"] == "column channel added"

    _write(root, "parquet/events", _table("parquet/events", DAYS[-1:], extra="channel"))
    _write(root, "parquet/fresh", _table("parquet/fresh", DAYS[-2:]))  # added later: learning
    broken = root / "parquet" / "broken" / "day=2026-03-01"
    broken.mkdir(parents=True)
    (broken / "part-0.parquet").write_bytes(b"not parquet at all")
    second = monitor.run()
    assert second.total == 4
    assert {(r["table"], r["problem"]) for r in second.sample()} == {
        ("delta/orders", "schema"),
        ("parquet/events", "schema"),
        ("parquet/broken", "unreadable"),
    }


def test_a_missing_or_empty_root_is_an_error_not_a_pass(tmp_path):
    result = TableMonitor(LakeRoot(str(tmp_path / "nowhere")), now=MONDAY).run()
    assert result.error is not None and "nowhere" in result.error
    (tmp_path / "empty" / "not_a_table").mkdir(parents=True)
    empty = TableMonitor(LakeRoot(str(tmp_path / "empty")), now=MONDAY).run()
    assert empty.error == f"no tables found: tables under {tmp_path / 'empty'}"


def test_an_iceberg_namespace_is_watched_through_its_snapshots(tmp_path):
    from pyiceberg.types import StringType

    from tests.checkers.lake_tables import day_rows, iceberg_catalog, write_iceberg

    catalog, properties = iceberg_catalog(tmp_path / "iceberg")
    days = [dt.date(2024, 3, d) for d in range(1, 6)]
    write_iceberg(catalog, "shop.steady", days)
    write_iceberg(catalog, "shop.shrunk", days).append(day_rows(days[0], n=4))
    retyped = write_iceberg(catalog, "shop.widened", days)
    with retyped.update_schema() as update:
        update.add_column("channel", StringType())
    retyped.append(day_rows(days[0]).append_column("channel", pa.array(["web"] * 8)))
    root = IcebergNamespace("shop", "lake", catalog_properties=tuple(properties.items()))
    quiet_for_a_day = max(
        s.timestamp_ms
        for t in ("steady", "shrunk", "widened")
        for s in catalog.load_table(f"shop.{t}").metadata.snapshots
    )
    now = dt.datetime.fromtimestamp(quiet_for_a_day / 1000, dt.UTC) + dt.timedelta(days=1)
    result = TableMonitor(root, now=now).run()
    assert result.total == 3
    assert sorted((r["table"], r["problem"]) for r in result.sample()) == [
        ("shop.shrunk", "late"),
        ("shop.shrunk", "volume"),
        ("shop.steady", "late"),  # loads came every few milliseconds, then none for a day
        ("shop.widened", "late"),
        ("shop.widened", "schema"),
    ]


@pytest.fixture(scope="module")
def catalog_database(spark, tmp_path_factory):  # type: ignore[no-untyped-def]
    """Four Parquet tables saved with saveAsTable in a database of the session catalog, loaded
    daily for two weeks: one stops on Thursday, one's Sunday load is half; and a view."""
    location = tmp_path_factory.mktemp("warehouse")
    spark.sql(f"CREATE DATABASE dq_monitored LOCATION '{location}'")
    days = DAYS[-14:]
    for table in ("orders", "payments", "stopped", "shrunk"):
        loaded = [d for d in days if table != "stopped" or d <= days[-4]]
        rows = [
            (n, day.isoformat())
            for day in loaded
            for n in range(10 if table == "shrunk" and day == days[-1] else _rows(table, day))
        ]
        frame = spark.createDataFrame(rows, "id bigint, day string")
        frame.write.partitionBy("day").format("parquet").saveAsTable(f"dq_monitored.{table}")
    spark.sql("CREATE VIEW dq_monitored.recent AS SELECT * FROM dq_monitored.orders")
    yield "dq_monitored"
    spark.sql("DROP DATABASE dq_monitored CASCADE")


@pytest.mark.classic_only  # jobs are counted through the classic status tracker
def test_a_catalog_databases_tables_are_watched_from_metadata_with_no_spark_job(
    spark, catalog_database
):
    monitor = TableMonitor(CatalogDatabase(catalog_database), now=MONDAY)
    result, jobs = count_jobs(spark, monitor.run)
    assert jobs == 0  # the catalog's listing is a command; footers are read by pyarrow
    assert (result.total, result.reading["rows_read"]) == (4, 0)  # the view is no table
    assert result.failing_keys() == ["dq_monitored.shrunk", "dq_monitored.stopped"]
    assert {r["table"]: r["problem"] for r in result.sample()} == {
        "dq_monitored.stopped": "late",
        "dq_monitored.shrunk": "volume",
    }
    # tables created later are listed on the next run: an empty one is learning its cadence;
    # one whose provider keeps no file metadata is a finding, never a silent pass
    spark.sql(f"CREATE TABLE {catalog_database}.refunds (id bigint) USING parquet")
    spark.sql(f"CREATE TABLE {catalog_database}.legacy (id bigint) USING csv")
    later = monitor.run()
    assert later.total == 6
    legacy = next(r for r in later.sample() if r["table"] == "dq_monitored.legacy")
    assert legacy["problem"] == "unreadable" and "provider csv" in str(legacy["detail"])
    assert "dq_monitored.refunds" not in later.failing_keys()
