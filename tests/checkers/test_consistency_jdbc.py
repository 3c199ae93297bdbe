"""ConsistencyChecker over JdbcParser sides: the comparison runs inside the database, and what
leaves it is measured by a TCP proxy between the driver and the server (bytes, not assumed rows);
text and composite keys find exactly the planted differences in PostgreSQL, MariaDB and Parquet."""

from __future__ import annotations

import datetime as dt
import socket
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from checkers.consistency import ConsistencyChecker, SqlTable
from checkers.consistency.normalise import SESSION_SETTINGS
from checkers.parsers.jdbc import JdbcParser
from tests.byte_proxy import ByteProxy
from tests.scheduling.databases import fresh_database, run_sql

pytestmark = [pytest.mark.postgres, pytest.mark.mariadb]

#: Bisection in small steps, so that a few hundred rows take several levels.
TIGHT: dict[str, Any] = {"bisection_factor": 4, "bisection_threshold": 8, "first_level_cells": 16}


def _proxied(url: str, proxy: ByteProxy) -> str:
    return sa.make_url(url).set(port=proxy.port).render_as_string(hide_password=False)


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    directory = tmp_path_factory.mktemp("servers")
    with (
        fresh_database("postgres", directory) as postgres,
        fresh_database("mariadb", directory) as mariadb,
    ):
        yield postgres, mariadb


def _port(url: str) -> int:
    port = sa.make_url(url).port
    assert port is not None
    return port


# --- bytes out of the database -----------------------------------------------------------------

ROWS = 20_000
#: What the lake changes against PostgreSQL's `orders`.
LAKE_DELETED = (17, 9_999)
LAKE_INSERTED = (20_001,)
LAKE_UPDATED = (1, 12_345)


def _orders_lake(spark: SparkSession, path: Path) -> DataFrame:
    ids = spark.range(1, ROWS + 1).filter(~F.col("id").isin(*LAKE_DELETED))
    ids = ids.unionByName(spark.createDataFrame([(k,) for k in LAKE_INSERTED], "id long"))
    frame = ids.select(
        "id",
        F.md5(F.col("id").cast("string")).alias("name"),
        (F.col("id") * 0.5 + F.when(F.col("id").isin(*LAKE_UPDATED), 1).otherwise(0)).alias(
            "amount"
        ),
    )
    frame.write.parquet(str(path))
    return spark.read.parquet(str(path))


def test_a_jdbc_side_moves_no_more_bytes_than_a_sql_table(
    spark: SparkSession, servers: tuple[str, str], tmp_path: Path
) -> None:
    postgres, _ = servers
    run_sql(
        postgres,
        "CREATE TABLE orders (id bigint PRIMARY KEY, name text, amount double precision)",
        f"INSERT INTO orders SELECT g, md5(g::text), g * 0.5 FROM generate_series(1, {ROWS}) g",
    )
    lake = _orders_lake(spark, tmp_path / "lake")
    expected = {
        *(("missing_in_left", k) for k in LAKE_INSERTED),
        *(("missing_in_right", k) for k in LAKE_DELETED),
        *(("differing", k) for k in LAKE_UPDATED),
    }
    moved: dict[str, int] = {}
    queries: dict[str, int] = {}
    with ByteProxy(("127.0.0.1", _port(postgres))).running() as proxy:
        url = _proxied(postgres, proxy)
        sides: dict[str, SqlTable | JdbcParser] = {
            "SqlTable": SqlTable(url, "orders"),
            "JdbcParser": JdbcParser(url, table="orders"),
        }
        for name, side in sides.items():
            checker = ConsistencyChecker(side, lake, key="id", first_level_cells=256)
            result = checker.run()
            assert result.error is None, result.error
            found = {(row["difference"], row["id"]) for row in checker.differences()}
            assert found == expected, name
            moved[name] = proxy.reset()
            queries[name] = int(result.metrics["queries_left"])  # type: ignore[call-overload]
        # What any statement costs through Spark's JDBC source, whatever it answers: its
        # connections (the schema when the read is defined, again at its first action, the
        # rows), each with the server's greeting.
        parser = JdbcParser(url, table="orders")
        init = "; ".join(SESSION_SETTINGS["postgresql"])
        assert (
            parser.read_query(spark, "SELECT 1 AS x WHERE 1 = 0", session_init=init).collect() == []
        )
        per_statement = proxy.reset()
        # What reading the table moves: every row and column of the JdbcParser's read (Spark's
        # JDBC source pushes no aggregate down).
        read = parser.load(spark).agg(F.count("id"), F.sum(F.length("name")), F.sum("amount"))
        assert read.first()[0] == ROWS  # type: ignore[index]
        table = proxy.reset()
    print(
        f"bytes out of PostgreSQL: {moved}, statements {queries}, "
        f"{per_statement:,} per JDBC statement answering nothing, the table read once: {table:,}"
    )
    # The answers are no larger than SqlTable's: beyond them, only the statements' fixed cost.
    assert 0 < moved["JdbcParser"] - queries["JdbcParser"] * per_statement <= moved["SqlTable"]
    # No more statements than the SqlTable side (no search for duplicates: the bounds say the
    # key is unique), and far less than one read of the table.
    assert queries["JdbcParser"] <= queries["SqlTable"]
    assert moved["JdbcParser"] * 20 < table


# --- text and composite keys -------------------------------------------------------------------

NAMES = ["Zürich", "東京", "café ☕", "plain", "O'Hare", "naïve 🚀", "Plain"]
CARRIERS = ["AA", "Zü", "東"]
BASE = range(1, 401)


@dataclass(frozen=True)
class Changes:
    """A copy's changes against the base, by row number."""

    deleted: frozenset[int] = frozenset()
    inserted: frozenset[int] = frozenset()
    updated: dict[int, str] = field(default_factory=dict)  # row -> the column changed


BASE_ROWS = Changes()
#: PostgreSQL holds the base; MariaDB and the lake each change it.
MARIADB = Changes(frozenset({5, 300}), frozenset({1001}), {42: "name", 77: "amount"})
LAKE = Changes(frozenset({6}), frozenset({1002, 1003}), {99: "name"})


def _row(n: int, changes: Changes = BASE_ROWS) -> dict[str, object]:
    updated = changes.updated.get(n)
    return {
        "code": f"{NAMES[n % len(NAMES)]}-{n}",
        "carrier": CARRIERS[n % len(CARRIERS)],
        "day": dt.date(2026, 1, 1) + dt.timedelta(days=n // 50),
        "flight": n % 50,
        "name": "changed" if updated == "name" else NAMES[(n * 3) % len(NAMES)],
        "amount": n * 1.25 + (1.0 if updated == "amount" else 0.0),
    }


def _rows(changes: Changes = BASE_ROWS) -> list[dict[str, object]]:
    numbers = [*BASE, *sorted(changes.inserted)]
    return [_row(n, changes) for n in numbers if n not in changes.deleted]


def _flights_table(url: str, rows: list[dict[str, object]]) -> None:
    engine = sa.create_engine(url)
    text = sa.String(64)
    if engine.dialect.name in ("mysql", "mariadb"):  # keys by code point, as everywhere else
        text = sa.String(64, collation="utf8mb4_bin")
    table = sa.Table(
        "flights",
        sa.MetaData(),
        sa.Column("code", text, primary_key=True),
        sa.Column("carrier", text, nullable=False),
        sa.Column("day", sa.Date, nullable=False),
        sa.Column("flight", sa.Integer, nullable=False),
        sa.Column("name", text),
        sa.Column("amount", sa.Float(precision=53)),
        sa.UniqueConstraint("carrier", "day", "flight"),
    )
    table.metadata.create_all(engine)
    with engine.begin() as connection:
        connection.execute(table.insert(), rows)
    engine.dispose()


@pytest.fixture(scope="module")
def flights(
    spark: SparkSession, servers: tuple[str, str], tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, str, DataFrame]:
    """The base in PostgreSQL, MARIADB's changes in MariaDB, LAKE's in Parquet."""
    postgres, mariadb = servers
    _flights_table(postgres, _rows())
    _flights_table(mariadb, _rows(MARIADB))
    path = tmp_path_factory.mktemp("flights") / "lake"
    schema = "code STRING, carrier STRING, day DATE, flight INT, name STRING, amount DOUBLE"
    frame = spark.createDataFrame([tuple(r.values()) for r in _rows(LAKE)], schema)
    frame.write.parquet(str(path))
    return postgres, mariadb, spark.read.parquet(str(path))


def _expected(changes: Changes, key: list[str]) -> set[tuple[object, ...]]:
    """The differences of a copy against the base, as (difference, *key texts, column)."""

    def texts(n: int) -> tuple[str, ...]:
        row = _row(n)
        return tuple(str(row[k]) for k in key)

    return {
        *(("missing_in_right", *texts(n)) for n in changes.deleted),
        *(("missing_in_left", *texts(n)) for n in changes.inserted),
        *(("differing", *texts(n), column) for n, column in changes.updated.items()),
    }


def _found(checker: ConsistencyChecker, key: list[str]) -> set[tuple[object, ...]]:
    result = checker.run()
    assert result.error is None, result.error
    assert result.failing == len(checker.differences())
    return {
        (row["difference"], *(row[k] for k in key), *([row["columns"]] if row["columns"] else []))
        for row in checker.differences()
    }


@pytest.mark.connect  # the JDBC statements are read by the Connect server (tests/connect_paths.py)
@pytest.mark.parametrize(
    "key", [["code"], ["carrier", "day", "flight"]], ids=["text key", "composite key"]
)
def test_text_and_composite_keys_find_exactly_the_planted_differences(
    flights: tuple[str, str, DataFrame], key: list[str]
) -> None:
    postgres, mariadb, lake = flights
    # PostgreSQL against MariaDB, both compared inside their databases.
    inside = ConsistencyChecker(
        JdbcParser(postgres, table="flights"),
        JdbcParser(mariadb, query="SELECT * FROM flights -- a query as well as a table"),
        key=key,
        **TIGHT,
    )
    assert _found(inside, key) == _expected(MARIADB, key)
    assert inside.comparison is not None and max(inside.comparison.rows_fetched) < 200
    # A SqlTable against the Parquet lake, compared in Spark.
    lake_checker = ConsistencyChecker(SqlTable(postgres, "flights"), lake, key=key, **TIGHT)
    assert _found(lake_checker, key) == _expected(LAKE, key)
    assert lake_checker.comparison is not None and lake_checker.comparison.levels > 1


def test_an_unreachable_jdbc_side_is_an_error_without_its_secret(
    monkeypatch: pytest.MonkeyPatch, flights: tuple[str, str, DataFrame]
) -> None:
    _, _, lake = flights
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("DQ_TEST_OPS_PASSWORD", "s3cret-not-shown")
    parser = JdbcParser(
        f"postgresql+psycopg://dq@127.0.0.1:{port}/ops",
        table="flights",
        password_env="DQ_TEST_OPS_PASSWORD",
    )
    result = ConsistencyChecker(parser, lake, key="code").run()
    assert result.failing == 0 and result.error is not None
    assert f"JDBC table flights on jdbc:postgresql://127.0.0.1:{port}/ops" in result.error
    assert "s3cret-not-shown" not in result.error
