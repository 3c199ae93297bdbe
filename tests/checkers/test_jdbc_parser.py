"""JdbcParser against the local PostgreSQL and MariaDB servers (a fresh database per test), read
through the `spark` fixture's JDBC drivers: classic Spark and Spark Connect alike."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest
import sqlalchemy as sa
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from checkers.deadlines import within
from checkers.jdbc_drivers import MARIADB, POSTGRESQL, driver_jars, with_driver_jars
from checkers.parsers import SourceError
from checkers.parsers.jdbc import JdbcParser
from tests.conftest import POSTGRES_URL
from tests.scheduling.databases import fresh_database

# Over Connect the server, not this process, reads JDBC. (tests/connect_paths.py)
pytestmark = pytest.mark.connect

SERVERS = [
    pytest.param("postgres", marks=pytest.mark.postgres),
    pytest.param("mariadb", marks=pytest.mark.mariadb),
]
SECRET = "s3cret-Pa55-do-not-show"
ROWS = [
    {
        "id": n,
        "name": None if n % 7 == 0 else f"Zoë ✓ 東京 {n}",
        "amount": None if n % 5 == 0 else Decimal(n) * Decimal("1.25"),
        "seen_at": dt.datetime(2024, 3, 1, 12, 30) + dt.timedelta(hours=n),
    }
    for n in range(1, 101)
]


@pytest.fixture(params=SERVERS)
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh database with table `items` (ROWS), its SQLAlchemy URL."""
    with fresh_database(request.param, tmp_path) as url:
        engine = sa.create_engine(url)
        items = sa.Table(
            "items",
            sa.MetaData(),
            sa.Column("id", sa.Integer, primary_key=True),
            sa.Column("name", sa.String(100)),
            sa.Column("amount", sa.Numeric(12, 2)),
            sa.Column("seen_at", sa.DateTime),
        )
        with engine.begin() as connection:
            items.create(connection)
            connection.execute(items.insert(), ROWS)
        engine.dispose()
        yield url


def _sqlalchemy_rows(url: str, query: str) -> list[tuple[object, ...]]:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as connection:
            return sorted(tuple(r) for r in connection.execute(sa.text(query)))
    finally:
        engine.dispose()


def _rows(df) -> list[tuple[object, ...]]:  # type: ignore[no-untyped-def]
    return sorted(tuple(r) for r in df.collect())


def test_reads_a_table_as_sqlalchemy_does(spark: SparkSession, database: str) -> None:
    df = JdbcParser(database, table="items").load(spark)
    assert df.columns == ["id", "name", "amount", "seen_at"]
    expected = _sqlalchemy_rows(database, "SELECT id, name, amount, seen_at FROM items")
    assert _rows(df) == expected
    # NULLs, Unicode, decimals and timestamps came through as values, not text.
    got = {r["id"]: r for r in df.collect()}
    assert got[7]["name"] is None and got[5]["amount"] is None
    assert got[2]["name"] == "Zoë ✓ 東京 2" and got[2]["amount"] == Decimal("2.50")
    assert got[1]["seen_at"] == dt.datetime(2024, 3, 1, 13, 30)


def test_reads_a_query(spark: SparkSession, database: str) -> None:
    query = "SELECT id, amount FROM items WHERE id <= 10 -- the first ten"
    df = JdbcParser(database, query=query).load(spark)
    assert _rows(df) == _sqlalchemy_rows(database, "SELECT id, amount FROM items WHERE id <= 10")


@pytest.mark.parametrize("source", [{"table": "items"}, {"query": "SELECT * FROM items"}])
def test_partitioned_read_with_derived_bounds_reads_every_row_once(
    spark: SparkSession, database: str, source: dict[str, str]
) -> None:
    parser = JdbcParser(database, **source, partition_column="id", num_partitions=4)
    df = parser.load(spark)
    ids = [r["id"] for r in df.select("id").collect()]
    assert sorted(ids) == list(range(1, 101))  # each row exactly once
    assert df.select(F.spark_partition_id()).distinct().count() == 4
    assert _rows(df) == _sqlalchemy_rows(database, "SELECT id, name, amount, seen_at FROM items")


def test_bounds_narrower_than_the_data_still_read_every_row_once(
    spark: SparkSession, database: str
) -> None:
    parser = JdbcParser(
        database,
        table="items",
        partition_column="id",
        lower_bound=40,
        upper_bound=60,
        num_partitions=3,
        fetch_size=7,
    )
    ids = [r["id"] for r in parser.load(spark).select("id").collect()]
    assert sorted(ids) == list(range(1, 101))


def test_an_empty_table_reads_without_bounds(spark: SparkSession, database: str) -> None:
    parser = JdbcParser(database, query="SELECT * FROM items WHERE id < 0", partition_column="id")
    assert parser.load(spark).count() == 0


def test_user_and_password_come_from_the_environment_and_are_never_shown(
    spark: SparkSession, database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DQ_TEST_JDBC_PASSWORD", SECRET)
    url = sa.make_url(database).set(port=1).render_as_string(hide_password=False)
    parser = JdbcParser(url, table="items", password_env="DQ_TEST_JDBC_PASSWORD", deadline_s=10)
    with pytest.raises(SourceError) as caught:
        parser.load(spark)
    assert SECRET not in str(caught.value) and SECRET not in parser.describe()
    # A URL built from the environment at read time may carry a password: it is never shown.
    with_password = sa.make_url(url).set(password=SECRET).render_as_string(hide_password=False)
    lazy = JdbcParser(lambda: with_password, table="items", deadline_s=10)
    with pytest.raises(SourceError) as caught:
        lazy.load(spark)
    assert SECRET not in str(caught.value) and SECRET not in lazy.describe()
    lazy_jdbc = JdbcParser(lambda: f"jdbc:mariadb://u:{SECRET}@h/db?password={SECRET}", table="t")
    assert SECRET not in lazy_jdbc.describe()


def test_the_user_comes_from_the_environment(
    spark: SparkSession, database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed = sa.make_url(database)
    monkeypatch.setenv("DQ_TEST_JDBC_USER", parsed.username or "")
    anonymous = parsed.set(username=None).render_as_string(hide_password=False)
    parser = JdbcParser(anonymous, query="SELECT id FROM items", user_env="DQ_TEST_JDBC_USER")
    assert parser.load(spark).count() == len(ROWS)


def test_driver_jars_are_debians_then_dq_jdbc_jars(tmp_path: Path) -> None:
    extra = tmp_path / "other-driver.jar"
    extra.write_bytes(b"")
    jars = with_driver_jars("a.jar", {"DQ_JDBC_JARS": f"{extra}, "}).split(",")
    assert jars == ["a.jar", str(POSTGRESQL.jar), str(MARIADB.jar), str(extra)]
    with pytest.raises(FileNotFoundError, match="DQ_JDBC_JARS"):
        driver_jars({"DQ_JDBC_JARS": str(tmp_path / "absent.jar")})


def test_a_password_written_into_the_url_is_refused() -> None:
    with pytest.raises(ValueError, match="password_env"):
        JdbcParser(f"postgresql+psycopg://dq:{SECRET}@db/shop", table="orders")
    with pytest.raises(ValueError, match="password_env"):
        JdbcParser(f"jdbc:postgresql://db/shop?user=dq&password={SECRET}", table="orders")


def test_sqlalchemy_urls_translate_to_jdbc_urls() -> None:
    assert JdbcParser("postgresql+psycopg://dq@db/shop", table="t").describe() == (
        "JDBC table t on jdbc:postgresql://db:5432/shop"
    )
    assert JdbcParser("mysql+pymysql://dq@db:3307/shop", query="SELECT 1").describe() == (
        "JDBC query on jdbc:mysql://db:3307/shop?permitMysqlScheme"
    )


def test_a_driver_that_is_not_installed_is_a_clear_error(
    spark: SparkSession, database: str
) -> None:
    parser = JdbcParser(database, table="items", driver="org.example.NoSuchDriver")
    with pytest.raises(
        SourceError, match=r"org\.example\.NoSuchDriver is not on Spark's classpath"
    ):
        parser.load(spark)


@pytest.mark.postgres
def test_a_missing_debian_driver_names_its_package(tmp_path: Path) -> None:
    # A Spark session started without the driver jars, in its own process (one JVM per process).
    script = textwrap.dedent(
        """
        from pyspark.sql import SparkSession
        from checkers.parsers import SourceError
        from checkers.parsers.jdbc import JdbcParser
        spark = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
        spark = spark.getOrCreate()
        try:
            JdbcParser("postgresql+psycopg://postgres@127.0.0.1:5432/test", table="t").load(spark)
        except SourceError as exc:
            print("ERROR:", exc)
        """
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    done = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    error = [line for line in done.stdout.splitlines() if line.startswith("ERROR:")]
    assert error, done.stderr[-2000:]
    assert POSTGRESQL.missing() in error[0]
    assert "apt-get install libpostgresql-jdbc-java" in error[0]


@pytest.mark.parametrize("kind", SERVERS)
def test_an_unreachable_database_is_a_clear_error(spark: SparkSession, kind: str) -> None:
    url = {
        "postgres": "postgresql+psycopg://postgres@127.0.0.1:1/test",
        "mariadb": "mysql+pymysql://root@127.0.0.1:1/test",
    }[kind]
    parser = JdbcParser(url, table="items", deadline_s=5)
    with pytest.raises(SourceError, match="cannot read JDBC table items on jdbc:") as caught:
        parser.load(spark)
    assert "127.0.0.1:1" in parser.describe()
    assert "refused" in str(caught.value).lower() or "connect" in str(caught.value).lower()


@pytest.mark.postgres
def test_a_query_past_the_deadline_is_cancelled(spark: SparkSession) -> None:
    parser = JdbcParser(POSTGRES_URL, query="SELECT 1 AS x FROM pg_sleep(30)")
    with within(2):  # the loader's deadline wins over the default
        df = parser.load(spark)  # the schema query returns at once (WHERE 1=0)
    # The rows are read when a job runs: Spark's queryTimeout (2 s) makes the server cancel.
    with pytest.raises(Exception, match=r"(?i)cancel"):
        df.collect()
