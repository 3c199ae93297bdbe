"""ConsistencyChecker on real engines: a PostgreSQL table against a Parquet lake, a MariaDB table
against a PostgreSQL table, a table against itself. The data holds NULLs, floats near the
tolerance, timestamps written with other time zones, Unicode, trailing spaces, decimals at other
scales and duplicate keys; every inserted, deleted and updated row must be found, nothing else."""

from __future__ import annotations

import datetime as dt
import decimal
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from pyspark.sql import DataFrame, SparkSession

from checkers import KnownBroken, LessThan
from checkers.consistency import ConsistencyChecker, SqlTable
from tests.scheduling.databases import fresh_database

# The Spark side of a comparison reads JDBC through the server and collects through Arrow.
# (tests/connect_paths.py)
pytestmark = pytest.mark.connect

UTC = dt.UTC
PLUS2 = dt.timezone(dt.timedelta(hours=2))
TOLERANCE = 0.001
NAMES = ["Zürich", "東京", "café ☕", "plain", "", None, "O'Hare", "naïve 🚀"]


def _base() -> list[dict[str, object]]:
    rows = []
    for n in range(1, 401):
        rows.append(
            {
                "id": n * 3,  # gaps between keys
                "name": NAMES[n % len(NAMES)],
                "amount": None if n % 17 == 0 else n * 1.25 + 0.0004,
                "price": None if n % 19 == 0 else decimal.Decimal(n) / 4,
                "at": None
                if n % 23 == 0
                else dt.datetime(2026, 1, 1, tzinfo=UTC) + dt.timedelta(minutes=n, microseconds=n),
                "day": dt.date(2026, 1, 1) + dt.timedelta(days=n),
                "flag": n % 2 == 0,
            }
        )
    return rows


#: What the left side (the one under test) changes against the base, by key.
DELETED = {9, 300, 1200}  # on the right only: missing in the left
INSERTED = {2, 1201, 5000}  # on the left only: missing in the right
UPDATED = {
    24: {"name": "Zurich"},  # Unicode: ü is not u
    60: {"amount": 75.0004 + 0.01},  # beyond the tolerance
    90: {"at": None},  # a NULL where there was a value
    120: {"name": "changed", "flag": False},  # two columns
    150: {"price": decimal.Decimal("37.51")},
    180: {"at": dt.datetime(2026, 1, 1, 1, 0, 59, tzinfo=UTC)},  # the instant moved
}
#: Changes that are no difference at all.
SAME = {
    # within the tolerance, across a grid step of the hash: rows are fetched, then found equal
    33: {"amount": 11 * 1.25 + 0.0004 + 0.0009},
    # the same instant written at +02:00
    36: {
        "at": (
            dt.datetime(2026, 1, 1, tzinfo=UTC) + dt.timedelta(minutes=12, microseconds=12)
        ).astimezone(PLUS2)
    },
    # trailing spaces are trimmed
    57: {"name": "plain   "},
}
DUPLICATED = 66  # twice on the right
#: Small cells and factors, so that 400 rows take several levels.
TIGHT: dict[str, Any] = {
    "float_tolerance": TOLERANCE,
    "bisection_factor": 4,
    "bisection_threshold": 8,
    "first_level_cells": 4,
}


def _left_rows() -> list[dict[str, object]]:
    rows = [dict(r) for r in _base() if r["id"] not in DELETED]
    for row in rows:
        row.update(UPDATED.get(row["id"], {}))  # type: ignore[call-overload]
        row.update(SAME.get(row["id"], {}))  # type: ignore[call-overload]
    for key in sorted(INSERTED):
        rows.append(
            {
                "id": key,
                "name": "new",
                "amount": 1.0,
                "price": None,
                "at": None,
                "day": dt.date(2026, 6, 1),
                "flag": False,
            }
        )
    return rows


def _right_rows() -> list[dict[str, object]]:
    rows = _base()
    rows.append(next(dict(r) for r in rows if r["id"] == DUPLICATED))
    return rows


def _load_sql(url: str, rows: list[dict[str, object]], *, name: str, primary_key: bool) -> None:
    engine = sa.create_engine(url)
    metadata = sa.MetaData()
    table = sa.Table(
        name,
        metadata,
        sa.Column("id", sa.BigInteger, primary_key=primary_key, autoincrement=False),
        sa.Column("name", sa.String(64)),
        sa.Column("amount", sa.Float(precision=53)),
        sa.Column("price", sa.Numeric(12, 2)),
        sa.Column("at", sa.DateTime(timezone=True)),
        sa.Column("day", sa.Date),
        sa.Column("flag", sa.Boolean),
    )
    if engine.dialect.name in ("mysql", "mariadb"):  # TIMESTAMP: an instant; microseconds
        from sqlalchemy.dialects import mysql

        table.c.at.type = mysql.TIMESTAMP(fsp=6)
        table.c.name.type = sa.String(64, collation="utf8mb4_bin")
        rows = [{**r, "at": _utc_naive(r["at"])} for r in rows]
    metadata.create_all(engine)
    with engine.begin() as connection:
        if engine.dialect.name in ("mysql", "mariadb"):
            connection.exec_driver_sql("SET time_zone = '+00:00'")
        connection.execute(table.insert(), rows)
    engine.dispose()


def _utc_naive(value: object) -> object:
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value.astimezone(UTC).replace(tzinfo=None)
    return value


def _lake(spark: SparkSession, rows: list[dict[str, object]], path: Path) -> DataFrame:
    schema = (
        "id BIGINT, name STRING, amount DOUBLE, price DECIMAL(12,4), at TIMESTAMP, day DATE, "
        "flag BOOLEAN"
    )
    frame = spark.createDataFrame([tuple(r.values()) for r in rows], schema)
    frame.write.parquet(str(path))
    return spark.read.parquet(str(path))


def _orders_and_lake(spark: SparkSession, postgres: str, tmp_path: Path) -> DataFrame:
    """The left rows as PostgreSQL's `orders`, and the right rows as a Parquet lake."""
    _load_sql(postgres, _left_rows(), name="orders", primary_key=True)
    return _lake(spark, _right_rows(), tmp_path / "lake")


@pytest.fixture
def postgres(tmp_path: Path) -> Iterator[str]:
    with fresh_database("postgres", tmp_path) as url:
        yield url


@pytest.fixture
def mariadb(tmp_path: Path) -> Iterator[str]:
    with fresh_database("mariadb", tmp_path) as url:
        yield url


EXPECTED = {
    "missing_in_left": {k: None for k in DELETED},
    "missing_in_right": {k: None for k in INSERTED},
    "differing": {
        24: "name",
        60: "amount",
        90: "at",
        120: "name, flag",
        150: "price",
        180: "at",
    },
    "duplicate_key": {DUPLICATED: None},
}


def _run(checker: ConsistencyChecker) -> tuple[dict[str, dict[int, str | None]], object]:
    result = checker.run()
    assert result.error is None, result.error
    found: dict[str, dict[int, str | None]] = {}
    for row in checker.differences():
        found.setdefault(row["difference"], {})[row["id"]] = row["columns"]
    return found, result


@pytest.mark.postgres
def test_a_postgres_table_against_a_parquet_lake(
    spark: SparkSession, postgres: str, tmp_path: Path
) -> None:
    lake = _orders_and_lake(spark, postgres, tmp_path)
    checker = ConsistencyChecker(
        SqlTable(postgres, "orders"),
        lake,
        key="id",
        **TIGHT,
    )
    found, result = _run(checker)
    assert found == EXPECTED
    assert result.failing == sum(len(v) for v in EXPECTED.values())  # type: ignore[attr-defined]
    assert result.metrics["levels"] > 2  # type: ignore[attr-defined]
    # the left holds 402 rows; far fewer leave PostgreSQL
    assert 0 < result.metrics["rows_fetched_left"] < 200  # type: ignore[attr-defined]
    # Facing PostgreSQL's primary key, the lake is not scanned for duplicates (no query more
    # than PostgreSQL's): its duplicated key surfaces in the bisection and is counted there.
    assert result.metrics["duplicate_keys"] == 1  # type: ignore[attr-defined]
    assert result.metrics["queries_right"] == result.metrics["queries_left"]  # type: ignore[attr-defined]


@pytest.mark.postgres
@pytest.mark.mariadb
def test_a_mariadb_table_against_a_postgres_table(postgres: str, mariadb: str) -> None:
    _load_sql(mariadb, _left_rows(), name="orders", primary_key=True)
    _load_sql(postgres, _right_rows(), name="orders_copy", primary_key=False)
    checker = ConsistencyChecker(
        SqlTable(mariadb, "orders"),
        SqlTable(postgres, "orders_copy"),
        key="id",
        **TIGHT,
    )
    found, result = _run(checker)
    assert found == EXPECTED
    assert result.metrics["duplicate_keys"] == 1  # type: ignore[attr-defined]


@pytest.mark.postgres
def test_a_table_against_itself_finds_nothing_and_fetches_no_row(postgres: str) -> None:
    _load_sql(postgres, _left_rows(), name="orders", primary_key=True)
    checker = ConsistencyChecker(
        SqlTable(postgres, "orders"), SqlTable(postgres, "orders"), key="id"
    )
    found, result = _run(checker)
    assert found == {}
    assert result.failing == 0 and result.total == len(_left_rows())  # type: ignore[attr-defined]
    assert result.metrics["rows_fetched_left"] == 0 == result.metrics["rows_fetched_right"]  # type: ignore[attr-defined]


def test_a_lake_against_itself_under_another_session_time_zone(
    spark: SparkSession, tmp_path: Path
) -> None:
    lake = _lake(spark, _right_rows(), tmp_path / "lake")
    found, result = _run(
        ConsistencyChecker(lake, spark.read.parquet(str(tmp_path / "lake")), key="id")
    )
    assert found == {"duplicate_key": {DUPLICATED: None}}  # reported, never hidden
    duplicate = json.loads(next(iter(_samples(result)))["left"])
    assert duplicate == {"rows": 2}


def _samples(result: object) -> list[dict[str, object]]:
    return result.sample()  # type: ignore[attr-defined,no-any-return]


@pytest.mark.postgres
def test_tolerances_and_known_broken_keys_apply(
    spark: SparkSession, postgres: str, tmp_path: Path
) -> None:
    lake = _orders_and_lake(spark, postgres, tmp_path)
    checker = ConsistencyChecker(
        SqlTable(postgres, "orders"), lake, key="id", float_tolerance=TOLERANCE
    )
    result = checker.run(LessThan(20) & KnownBroken(sorted(DELETED)))
    total = sum(len(v) for v in EXPECTED.values())
    assert (result.failing, result.unexcused) == (total, total - len(DELETED))
    keys = result.failing_keys()
    assert set(keys) == {k for kind in EXPECTED.values() for k in kind} - DELETED
    sample = {row["id"]: row for row in result.sample()}
    assert json.loads(sample[60]["left"])["amount"] == pytest.approx(75.0104)
    assert json.loads(sample[24]["right"]) == {"name": "Zürich"}


def _error(checker: ConsistencyChecker) -> str:
    result = checker.run()
    assert result.failing == 0 and result.error is not None
    return result.error


@pytest.mark.postgres
def test_a_key_column_missing_on_one_side_is_an_error(
    spark: SparkSession, postgres: str, tmp_path: Path
) -> None:
    _load_sql(postgres, _left_rows(), name="orders", primary_key=True)
    lake = _lake(spark, _right_rows(), tmp_path / "lake").withColumnRenamed("id", "order_id")
    error = _error(ConsistencyChecker(SqlTable(postgres, "orders"), lake, key="id"))
    assert "key column 'id' is missing on the right" in error


@pytest.mark.postgres
def test_a_key_that_is_not_comparable_across_engines_is_an_error(
    spark: SparkSession, postgres: str, tmp_path: Path
) -> None:
    lake = _orders_and_lake(spark, postgres, tmp_path)
    text_key = lake.withColumn("id", lake["id"].cast("string"))
    error = _error(ConsistencyChecker(SqlTable(postgres, "orders"), text_key, key="id"))
    assert "key column 'id' is integer on the left and text on the right" in error
    assert "same kind" in error
    float_key = ConsistencyChecker(SqlTable(postgres, "orders"), lake, key=["amount"])
    error = _error(float_key)
    assert "floats are equal within a tolerance; key on integers, text" in error
    assert "join them with PredicateDoubleDatasetsChecker(left, right, on=['amount', ...])" in error


def test_a_database_driver_that_is_not_installed_is_an_error(
    spark: SparkSession, tmp_path: Path
) -> None:
    lake = _lake(spark, _right_rows(), tmp_path / "lake")
    table = SqlTable("postgresql+pg8000://someone@127.0.0.1/nowhere", "orders")
    error = _error(ConsistencyChecker(table, lake, key="id"))
    assert "pg8000" in error and "not installed" in error


def test_an_unreachable_database_is_an_error(spark: SparkSession, tmp_path: Path) -> None:
    lake = _lake(spark, _right_rows(), tmp_path / "lake")
    import socket

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    table = SqlTable(f"postgresql+psycopg://dq:secret@127.0.0.1:{port}/ops", "orders")
    error = _error(ConsistencyChecker(table, lake, key="id"))
    assert f"table orders on postgresql+psycopg://dq:***@127.0.0.1:{port}/ops" in error
    assert "secret" not in error


@pytest.mark.postgres
def test_a_database_past_the_deadline_is_an_error(postgres: str) -> None:
    _load_sql(postgres, _left_rows(), name="orders", primary_key=True)
    with sa.create_engine(postgres).begin() as connection:
        connection.exec_driver_sql("CREATE VIEW slow AS SELECT o.* FROM orders o, pg_sleep(30) s")
    slow = SqlTable(postgres, "slow", deadline_s=1.0)
    error = _error(ConsistencyChecker(SqlTable(postgres, "orders"), slow, key="id"))
    assert "table slow on" in error and "timed out after 1 s" in error
