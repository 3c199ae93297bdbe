"""Partitions named by a column: Spark catalog tables (temp views) listed by one aggregate, and SQL
queries listed by an aggregate that runs in the database (SQLite; PostgreSQL for quoting)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import sqlalchemy as sa

from checkers.parsers import (
    PARTITION_COLUMN,
    PartitionColumn,
    SourceError,
    SqlQueryParser,
    TableParser,
)
from tests.metrics.jobs import count_jobs
from tests.scheduling.databases import fresh_database

UTC = dt.UTC
DAYS = [dt.date(2013, 1, 5), dt.date(2013, 1, 6), dt.date(2013, 1, 7)]


@contextmanager
def statements() -> Iterator[list[str]]:
    """The SQL sent by every engine while the block runs."""
    sent: list[str] = []

    def record(conn, cursor, statement, parameters, context, executemany) -> None:
        sent.append(statement)

    sa.event.listen(sa.engine.Engine, "before_cursor_execute", record)
    try:
        yield sent
    finally:
        sa.event.remove(sa.engine.Engine, "before_cursor_execute", record)


def bookings_view(spark, name: str, rows: list[tuple]) -> None:
    spark.createDataFrame(
        rows, "id int, day date, shop int, city string, updated_at timestamp"
    ).createOrReplaceTempView(name)


ROWS = [
    (1, DAYS[0], 7, "Paris", dt.datetime(2013, 1, 5, 10)),
    (2, DAYS[0], 7, "Lyon", dt.datetime(2013, 1, 5, 11)),
    (3, DAYS[1], 8, "New York", dt.datetime(2013, 1, 6, 9)),
    (4, DAYS[2], 9, "Paris", dt.datetime(2013, 1, 7, 9)),
]

#: (column, listed keys, rows of the first two partitions by key, period starts)
KINDS = [
    (
        "day",
        ["day=2013-01-05", "day=2013-01-06", "day=2013-01-07"],
        [1, 2, 3],
        [dt.datetime(2013, 1, d, tzinfo=UTC) for d in (5, 6, 7)],
    ),
    ("shop", ["shop=7", "shop=8", "shop=9"], [1, 2, 3], [None, None, None]),
    ("city", ["city=Lyon", "city=New York", "city=Paris"], [2, 3], [None, None, None]),
]


@pytest.mark.parametrize(("column", "keys", "first_two", "starts"), KINDS)
def test_table_partitions_by_date_int_and_string(spark, column, keys, first_two, starts):
    bookings_view(spark, "bookings_parts", ROWS)
    parser = TableParser(
        "bookings_parts", partitioning=PartitionColumn(column, changed="updated_at")
    )
    found = parser.partitions(spark)
    assert [p.key for p in found] == keys
    assert [p.ts for p in found] == starts
    assert [p.paths for p in found] == [(), (), ()]
    read = parser.read_partitions(spark, found[:2])
    assert sorted(r["id"] for r in read.collect()) == first_two
    assert {r[PARTITION_COLUMN] for r in read.collect()} == set(keys[:2])
    assert all(r[PARTITION_COLUMN] == f"{column}={r[column]}" for r in read.collect())


def test_table_fingerprints_follow_count_and_latest_change(spark):
    bookings_view(spark, "bookings_fp", ROWS)
    parser = TableParser("bookings_fp", partitioning=PartitionColumn("day", changed="updated_at"))
    before = {p.key: p.fingerprint for p in parser.partitions(spark)}
    assert {p.key: p.fingerprint for p in parser.partitions(spark)} == before
    updated = [*ROWS[:3], (4, DAYS[2], 9, "Paris", dt.datetime(2013, 1, 8, 9))]
    bookings_view(spark, "bookings_fp", updated)
    after = {p.key: p.fingerprint for p in parser.partitions(spark)}
    assert [k for k in before if after[k] != before[k]] == ["day=2013-01-07"]
    bookings_view(spark, "bookings_fp", ROWS[1:])  # a row deleted
    deleted = {p.key: p.fingerprint for p in parser.partitions(spark)}
    assert [k for k in before if deleted[k] != before[k]] == ["day=2013-01-05"]


def test_table_null_partition_and_timestamps(spark):
    rows = [
        (1, None, 1),
        (2, dt.datetime(2013, 1, 5, 5, 30), 2),
        (3, dt.datetime(2013, 1, 5, 5, 30), 3),
    ]
    spark.createDataFrame(rows, "id int, at timestamp, v int").createOrReplaceTempView("ticks")
    parser = TableParser("ticks", partitioning=PartitionColumn("at", changed="v"))
    found = parser.partitions(spark)
    assert [p.key for p in found] == ["at=2013-01-05 05:30:00", "at=__HIVE_DEFAULT_PARTITION__"]
    assert found[0].ts == found[0].value == dt.datetime(2013, 1, 5, 5, 30, tzinfo=UTC)
    assert sorted(r["id"] for r in parser.read_partitions(spark, found[:1]).collect()) == [2, 3]
    nulls = parser.read_partitions(spark, found[1:]).collect()
    assert [(r["id"], r[PARTITION_COLUMN]) for r in nulls] == [(1, "at=__HIVE_DEFAULT_PARTITION__")]
    assert parser.read_partitions(spark, []).collect() == []


@pytest.mark.classic_only  # counts jobs through the SparkContext
def test_table_listing_is_one_job(spark):
    bookings_view(spark, "bookings_jobs", ROWS)
    parser = TableParser("bookings_jobs", partitioning=PartitionColumn("day", changed="updated_at"))
    found, jobs = count_jobs(spark, lambda: parser.partitions(spark))
    assert len(found) == 3 and jobs == 1


def test_table_promise_and_missing_columns(spark):
    bookings_view(spark, "bookings_bad", ROWS)
    parser = TableParser(
        "bookings_bad",
        schema="id string",
        partitioning=PartitionColumn("day", changed="updated_at"),
    )
    with pytest.raises(SourceError, match="column 'id' is int, promised string"):
        parser.read_partitions(spark, parser.partitions(spark))
    missing = TableParser("bookings_bad", partitioning=PartitionColumn("day", changed="version"))
    with pytest.raises(SourceError, match=r"table bookings_bad has no column 'version'"):
        missing.partitions(spark)


def sqlite_bookings(tmp_path, rows: int = 10_000) -> str:
    url = f"sqlite:///{tmp_path / 'ops.db'}"
    engine = sa.create_engine(url)
    with engine.begin() as connection:
        connection.exec_driver_sql(
            "CREATE TABLE bookings (id INTEGER, day DATE, shop INTEGER, city TEXT, updated_at TEXT)"
        )
        cities = ["Lyon", "New York", "Paris"]
        connection.execute(
            sa.text("INSERT INTO bookings VALUES (:id, :day, :shop, :city, :updated_at)"),
            [
                {
                    "id": n,
                    "day": DAYS[n % 3].isoformat(),
                    "shop": 7 + n % 3,
                    "city": cities[n % 3],
                    "updated_at": f"2013-01-0{5 + n % 3} {n % 24:02}:00:00",
                }
                for n in range(rows)
            ],
        )
    engine.dispose()
    return url


QUERY = "SELECT id, day, shop, city, updated_at FROM bookings WHERE id >= :first -- every row"
SCHEMA = "id int, day date, shop int, city string"


@pytest.mark.parametrize(("column", "keys", "_first_two", "starts"), KINDS)
def test_sql_partitions_are_aggregated_in_the_database(
    spark, tmp_path, column, keys, _first_two, starts
):
    url = sqlite_bookings(tmp_path)
    parser = SqlQueryParser(
        url,
        QUERY,
        params={"first": 0},
        schema=SCHEMA,  # type: ignore[arg-type]
        partitioning=PartitionColumn(column, changed="updated_at"),
    )
    with statements() as sent:
        found = parser.partitions(spark)
    assert len(sent) == 1 and "GROUP BY" in sent[0] and "count(*)" in sent[0]
    assert [p.key for p in found] == keys
    assert [p.ts for p in found] == starts
    assert sorted(p.value for p in found) == sorted(  # the database's own values, to bind again
        {
            "day": [d.isoformat() for d in DAYS],
            "shop": [7, 8, 9],
            "city": ["Lyon", "New York", "Paris"],
        }[column]
    )

    with statements() as sent:
        read = parser.read_partitions(spark, found[1:])
    assert len(sent) == 1 and "IN (?, ?)" in sent[0]
    chosen = {r[PARTITION_COLUMN] for r in read.select(PARTITION_COLUMN).distinct().collect()}
    assert chosen == set(keys[1:])
    # Rows arrive through the driver: only the chosen partitions' rows were fetched.
    assert read.count() == sum(1 for n in range(10_000) if keys.index(_key(column, n)) >= 1)
    assert read.schema.simpleString().startswith("struct<id:int,day:date,shop:int,city:string")


def _key(column: str, n: int) -> str:
    return {
        "day": f"day={DAYS[n % 3].isoformat()}",
        "shop": f"shop={7 + n % 3}",
        "city": f"city={['Lyon', 'New York', 'Paris'][n % 3]}",
    }[column]


def test_sql_keys_without_a_promise_render_as_the_read_does(spark, tmp_path):
    url = sqlite_bookings(tmp_path, rows=30)
    parser = SqlQueryParser(
        url, "SELECT * FROM bookings;", partitioning=PartitionColumn("day", changed="id")
    )
    found = parser.partitions(spark)
    assert [p.key for p in found] == [f"day={d.isoformat()}" for d in DAYS]
    assert [p.ts for p in found] == [dt.datetime.combine(d, dt.time(), UTC) for d in DAYS]
    read = parser.read_partitions(spark, found[:1])
    assert {r[PARTITION_COLUMN] for r in read.collect()} == {found[0].key}
    assert read.count() == 10


def test_sql_fingerprints_follow_changes(spark, tmp_path):
    url = sqlite_bookings(tmp_path, rows=30)
    parser = SqlQueryParser(
        url, "SELECT * FROM bookings", partitioning=PartitionColumn("shop", changed="updated_at")
    )
    before = {p.key: p.fingerprint for p in parser.partitions(spark)}
    assert {p.key: p.fingerprint for p in parser.partitions(spark)} == before
    engine = sa.create_engine(url)
    with engine.begin() as connection:
        connection.exec_driver_sql(
            "UPDATE bookings SET city = 'Nice', updated_at = '2014-01-01' WHERE id = 4"
        )
    engine.dispose()
    after = {p.key: p.fingerprint for p in parser.partitions(spark)}
    assert [k for k in before if after[k] != before[k]] == ["shop=8"]


def test_sql_empty_and_null_partitions(spark, tmp_path):
    url = sqlite_bookings(tmp_path, rows=6)
    engine = sa.create_engine(url)
    with engine.begin() as connection:
        connection.exec_driver_sql(
            "INSERT INTO bookings VALUES (99, NULL, NULL, NULL, '2015-01-01')"
        )
    engine.dispose()
    parser = SqlQueryParser(
        url,
        "SELECT * FROM bookings",
        schema=SCHEMA,
        partitioning=PartitionColumn("day", changed="updated_at"),
    )
    found = parser.partitions(spark)
    assert found[-1].key == "day=__HIVE_DEFAULT_PARTITION__" and found[-1].value is None
    nulls = parser.read_partitions(spark, [found[0], found[-1]])
    assert sorted(r["id"] for r in nulls.collect()) == [0, 3, 99]
    empty = parser.read_partitions(spark, [])
    assert empty.collect() == []
    assert empty.columns == [*nulls.columns]


def test_sql_listing_keeps_the_deadline(spark, tmp_path):
    endless = (
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i, i AS v FROM n"
    )
    parser = SqlQueryParser(
        f"sqlite:///{tmp_path / 'ops.db'}",
        endless,
        deadline_s=1,
        partitioning=PartitionColumn("i", changed="v"),
    )
    with pytest.raises(SourceError, match=r"timed out after 1 s.*interrupted"):
        parser.partitions(spark)


def test_sql_listing_failures_are_source_errors(spark, tmp_path):
    url = sqlite_bookings(tmp_path, rows=3)
    parser = SqlQueryParser(
        url, "SELECT * FROM bookings", partitioning=PartitionColumn("day", changed="version")
    )
    with pytest.raises(SourceError, match="no such column"):
        parser.partitions(spark)


def test_reserved_parameter_names_are_refused():
    with pytest.raises(ValueError, match=r"parameters \['__p0'\] are reserved"):
        SqlQueryParser(
            "sqlite://",
            "SELECT * FROM t WHERE id > :__p0",
            params={"__p0": -1},  # type: ignore[arg-type]
            partitioning=PartitionColumn("day", changed="id"),
        )


@pytest.mark.postgres
def test_postgres_identifiers_are_quoted(spark, tmp_path):
    with fresh_database("postgres", tmp_path) as url:
        engine = sa.create_engine(url)
        with engine.begin() as connection:
            connection.exec_driver_sql('CREATE TABLE t (id int, "Day" date, "updatedAt" int)')
            connection.exec_driver_sql(
                "INSERT INTO t VALUES "
                "(1, '2013-01-05', 1), (2, '2013-01-05', 2), (3, '2013-01-06', 3)"
            )
        engine.dispose()
        parser = SqlQueryParser(
            url, "SELECT * FROM t", partitioning=PartitionColumn("Day", changed="updatedAt")
        )
        found = parser.partitions(spark)
        assert [p.key for p in found] == ["Day=2013-01-05", "Day=2013-01-06"]
        assert found[0].value == dt.date(2013, 1, 5)
        read = parser.read_partitions(spark, found[1:])
        assert [(r["id"], r[PARTITION_COLUMN]) for r in read.collect()] == [(3, "Day=2013-01-06")]
