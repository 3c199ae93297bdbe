"""The same logical rows hash to the same integer in PostgreSQL, MariaDB, SQLite and Spark."""

from __future__ import annotations

import datetime as dt
import hashlib
import math
import uuid
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest
import sqlalchemy as sa
from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from checkers.consistency.normalise import (
    Rules,
    exact_checksum,
    kind_of_spark,
    kind_of_sql,
    prepare_connection,
    spark_digest,
    spark_halves,
    spark_text,
    sql_checksum,
    sql_digest,
    sql_row_number,
    sql_text,
)
from tests.scheduling.databases import fresh_database

RULES = Rules()
TOL = RULES.float_tolerance
PLUS2 = dt.timezone(dt.timedelta(hours=2))
UTC = dt.UTC
COLUMNS = ["id", "i", "d", "f", "s", "b", "dt", "ts", "tz"]
KINDS = {
    "id": "integer",
    "i": "integer",
    "d": "decimal",
    "f": "float",
    "s": "text",
    "b": "boolean",
    "dt": "date",
    "ts": "timestamp",
    "tz": "timestamp_tz",
}
TEXT_KINDS = [KINDS[c] == "text" for c in COLUMNS]
ENGINES = ("postgresql", "mariadb", "sqlite", "spark")
# Floats a store cannot hold: MariaDB has no NaN nor infinities, SQLite stores NaN as NULL.
NOT_IN = {"nan": {"mariadb", "sqlite"}, "inf": {"mariadb"}, "-inf": {"mariadb"}}


def _row(id_: int, **values: object) -> dict[str, object]:
    return {name: values.get(name) for name in COLUMNS} | {"id": id_}


ROWS = [
    _row(1),  # NULL in every kind
    _row(
        2,
        i=2**62,
        d=Decimal("1.5"),
        f=0.0,
        s="Zürich",
        b=True,
        dt=dt.date(2024, 2, 29),
        ts=dt.datetime(2024, 3, 31, 2, 30, 0, 123456),
        tz=dt.datetime(2024, 3, 1, 12, 0, 0, 500, tzinfo=PLUS2),
    ),
    _row(3, i=-(2**62), d=Decimal("-2.25"), f=-0.0, s="東京", b=False, dt=dt.date(1969, 12, 31)),
    _row(
        4,
        i=-1,
        d=Decimal("0"),
        f=TOL * 0.4999,
        s="🎉 party",
        ts=dt.datetime(1999, 12, 31, 23, 59, 59, 999999),
    ),
    # 01:30 in New York, twice on 2024-11-03: the session time zone must not matter.
    _row(
        5,
        i=0,
        d=Decimal("100"),
        f=TOL * 0.5001,
        s="",
        tz=dt.datetime(2024, 11, 3, 5, 30, tzinfo=UTC),
    ),
    _row(
        6,
        d=Decimal("12345678901.25"),
        f=-TOL * 0.5,
        s=None,
        tz=dt.datetime(2024, 11, 3, 6, 30, tzinfo=UTC),
    ),
    _row(7, d=Decimal("-0.0001"), f=3.14159, s="trail"),
    _row(8, f=-2.5e-7, s=" lead"),
    _row(9, f=1e9 + 0.123, s="a:b"),
    _row(10, f=2.0**62, s="-"),
    _row(11, f=-1.5e300, s="tab\t"),
    _row(12, f=1234567.000000499),
    _row(13, f=float("nan")),
    _row(14, f=float("inf")),
    _row(15, f=float("-inf")),
    _row(16, s="1:a"),
]
TRAILING = {
    "postgresql": "",
    "mariadb": "  ",
    "sqlite": "",
    "spark": " ",
}  # PG pads char(12) itself


def _values(engine: str, row: dict[str, object]) -> dict[str, object]:
    values = dict(row)
    if not _comparable(engine, row):
        values["f"] = None
    if values["s"] == "trail":
        values["s"] = "trail" + TRAILING[engine]
    if engine in ("mariadb", "sqlite") and isinstance(values["tz"], dt.datetime):
        if engine == "mariadb":  # no offsets in MariaDB literals: the session is in UTC
            values["tz"] = values["tz"].astimezone(UTC).replace(tzinfo=None)
        else:  # SQLite has no instant type: text with its offset
            values["tz"] = values["tz"].isoformat(sep=" ")
    if engine == "sqlite":  # stored as SQLAlchemy would: decimals as numbers, times as ISO text
        values["d"] = None if values["d"] is None else str(values["d"])
        for name in ("dt", "ts"):
            values[name] = None if values[name] is None else str(values[name])
    return values


def _comparable(engine: str, row: dict[str, object]) -> bool:
    f = row["f"]
    return not (isinstance(f, float) and not math.isfinite(f) and engine in NOT_IN[str(f)])


DDL = {
    "postgresql": "id BIGINT, i BIGINT, d NUMERIC(30, 6), f DOUBLE PRECISION, s CHAR(12), "
    "b BOOLEAN, dt DATE, ts TIMESTAMP(6), tz TIMESTAMPTZ(6)",
    "mariadb": "id BIGINT, i BIGINT, d DECIMAL(20, 4), f DOUBLE, s VARCHAR(20), b BOOLEAN, "
    "dt DATE, ts DATETIME(6), tz TIMESTAMP(6) NULL",
    "sqlite": "id BIGINT, i BIGINT, d DECIMAL(20, 2), f DOUBLE, s VARCHAR(20), b BOOLEAN, dt DATE, "
    "ts DATETIME, tz TIMESTAMP",
}
SPARK_SCHEMA = T.StructType(
    [
        T.StructField("id", T.LongType()),
        T.StructField("i", T.LongType()),
        T.StructField("d", T.DecimalType(25, 8)),
        T.StructField("f", T.DoubleType()),
        T.StructField("s", T.StringType()),
        T.StructField("b", T.BooleanType()),
        T.StructField("dt", T.DateType()),
        T.StructField("ts", T.TimestampNTZType()),
        T.StructField("tz", T.TimestampType()),
    ]
)


def _engine(url: str, dialect: str) -> sa.Engine:
    engine = sa.create_engine(url)
    sa.event.listen(engine, "connect", lambda dbapi, _record: prepare_connection(dialect, dbapi))
    return engine


def _sql_hashes(
    engine: sa.Engine, dialect: str, table: str, kinds: dict[str, str]
) -> dict[int, tuple]:
    texts = [sql_text(dialect, column, kinds[column], RULES) for column in COLUMNS]  # type: ignore[arg-type]
    number = sql_row_number(dialect, sql_digest(dialect, texts, TEXT_KINDS))
    query = f"SELECT id, {', '.join(texts)}, {number} FROM {table}"
    with engine.connect() as connection:
        return {row[0]: tuple(row[1:]) for row in connection.exec_driver_sql(query)}


def _load_sql(engine: sa.Engine, dialect: str, table: str) -> dict[int, tuple]:
    with engine.begin() as connection:
        connection.exec_driver_sql(f"CREATE TABLE {table} ({DDL[dialect]})")
        rows = [_values(dialect, row) for row in ROWS]
        names = ", ".join(f":{c}" for c in COLUMNS)
        connection.execute(sa.text(f"INSERT INTO {table} VALUES ({names})"), rows)
    reflected = sa.inspect(engine).get_columns(table)
    kinds = {c["name"]: kind_of_sql(c["type"]) for c in reflected}
    expected = KINDS | (
        {"tz": "timestamp"} if dialect == "sqlite" else {}
    )  # SQLite has no instant type
    assert kinds == expected
    return _sql_hashes(engine, dialect, table, kinds)


@pytest.fixture
def spark_new_york(spark: SparkSession) -> Iterator[SparkSession]:
    before = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "America/New_York")
    try:
        yield spark
    finally:
        spark.conf.set("spark.sql.session.timeZone", before)


def _spark_hashes(spark: SparkSession) -> dict[int, tuple]:
    frame = spark.createDataFrame(
        [tuple(_values("spark", r)[c] for c in COLUMNS) for r in ROWS], SPARK_SCHEMA
    )
    kinds = {f.name: kind_of_spark(f.dataType) for f in frame.schema.fields}
    assert kinds == KINDS
    texts = [spark_text(F.col(c), kinds[c], RULES) for c in COLUMNS]
    number = _spark_number(texts, TEXT_KINDS)
    return {row[0]: tuple(row[1:]) for row in frame.select("id", *texts, number).collect()}


@pytest.mark.postgres
@pytest.mark.mariadb
def test_the_same_rows_hash_alike_in_all_four_engines(
    spark_new_york: SparkSession, tmp_path: Path
) -> None:
    table = f"norm_{uuid.uuid4().hex[:12]}"
    results = {"spark": _spark_hashes(spark_new_york)}
    with (
        fresh_database("postgres", tmp_path) as pg_url,
        fresh_database("mariadb", tmp_path) as maria_url,
    ):
        for dialect, url in (
            ("postgresql", pg_url),
            ("mariadb", maria_url),
            ("sqlite", f"sqlite:///{tmp_path / 'n.db'}"),
        ):
            engine = _engine(url, dialect)
            try:
                results[dialect] = _load_sql(engine, dialect, table)
            finally:
                engine.dispose()
    for row in ROWS:
        seen = {e: results[e][row["id"]] for e in ENGINES if _comparable(e, row)}
        assert len(set(seen.values())) == 1, (row, seen)
        texts = next(iter(seen.values()))[:-1]
        assert 0 <= next(iter(seen.values()))[-1] < 2**56
        if row["id"] == 2:
            assert texts[1:] == (
                "4611686018427387904",
                "1.5",
                "0",
                "Zürich",
                "1",
                "2024-02-29",
                "2024-03-31 02:30:00.123456",
                "2024-03-01 10:00:00.000500",
            )
    hashes = [results["spark"][r["id"]][-1] for r in ROWS]
    assert len(set(hashes)) == len(hashes)  # '' differs from NULL, '-' from NULL, '1|a' from 'a'


def _sqlite_hashes(values: list[float]) -> list[int]:
    connection = sa.create_engine("sqlite://").raw_connection()
    try:
        prepare_connection("sqlite", connection.driver_connection)
        cursor = connection.cursor()
        cursor.execute("CREATE TABLE t (n INTEGER, f DOUBLE)")
        cursor.executemany("INSERT INTO t VALUES (?, ?)", list(enumerate(values)))
        texts = [sql_text("sqlite", "f", "float", RULES)]
        number = sql_row_number("sqlite", sql_digest("sqlite", texts, [False]))
        return [r[0] for r in cursor.execute(f"SELECT {number} FROM t ORDER BY n")]
    finally:
        connection.close()


def test_floats_differing_beyond_the_tolerance_never_hash_equal(spark: SparkSession) -> None:
    bases = [0.0, 0.1, -7.0000005, 123.456, 1e6 + 0.25, 4.5e8, 1.1e9, 2.0**62, -3e300]
    values = [v for b in bases for v in (b - 1.01 * TOL, b, b + 1.01 * TOL)]
    frame = spark.createDataFrame([(v,) for v in values], "f double")
    number = _spark_number([spark_text(F.col("f"), "float", RULES)], [False])
    in_spark = [r[0] for r in frame.select(number).collect()]
    assert in_spark == _sqlite_hashes(values)
    for k in range(len(bases)):
        low, mid, high = in_spark[3 * k : 3 * k + 3]
        distinct = {low, mid, high}
        # Above |x| = 2**50 * tolerance, x ± 1.01 * tolerance may round to x itself: equal values.
        assert len(distinct) == len({values[3 * k], values[3 * k + 1], values[3 * k + 2]})


def test_sums_of_100k_row_hashes_are_exact_and_agree(spark: SparkSession) -> None:
    n = 100_000
    frame = spark.range(n).select(
        F.col("id"), F.concat(F.lit("row "), F.col("id").cast("string")).alias("s")
    )
    texts: list[Column] = [
        spark_text(F.col("id"), "integer", RULES),
        spark_text(F.col("s"), "text", RULES),
    ]
    high, low = spark_halves(spark_digest(texts, [False, True]))
    sums = frame.select(F.sum(high), F.sum(low)).first()
    assert sums is not None
    in_spark = exact_checksum(int(sums[0]), int(sums[1]))

    connection = sa.create_engine("sqlite://").raw_connection()
    try:
        prepare_connection("sqlite", connection.driver_connection)
        cursor = connection.cursor()
        cursor.execute("CREATE TABLE t (id INTEGER, s TEXT)")
        cursor.executemany("INSERT INTO t VALUES (?, ?)", [(i, f"row {i}") for i in range(n)])
        sql_texts = [
            sql_text("sqlite", "id", "integer", RULES),
            sql_text("sqlite", "s", "text", RULES),
        ]
        checksum = sql_checksum("sqlite", sql_digest("sqlite", sql_texts, [False, True]))
        in_sqlite = int(cursor.execute(f"SELECT {checksum} FROM t").fetchone()[0])
    finally:
        connection.close()

    def number(i: int) -> int:
        text = f"row {i}"
        digest = hashlib.md5(f"{i}|{len(text.encode())}|{text}".encode()).hexdigest()
        return int(digest[:14], 16)

    expected = sum(map(number, range(n)))
    assert in_spark == in_sqlite == expected
    assert expected > 2**63  # beyond a 64-bit sum: SQLite's own sum() would have raised


def _spark_number(texts: list[Column], text_kinds: list[bool]) -> Column:
    high, low = spark_halves(spark_digest(texts, text_kinds))
    return high * F.lit(2**28) + low


def test_unsupported_types_are_named() -> None:
    with pytest.raises(ValueError, match="binary"):
        kind_of_spark(T.BinaryType())
    with pytest.raises(ValueError, match="array<int>"):
        kind_of_spark(T.ArrayType(T.IntegerType()))
    with pytest.raises(ValueError, match="LargeBinary"):
        kind_of_sql(sa.LargeBinary())
    with pytest.raises(ValueError, match="float_tolerance"):
        Rules(float_tolerance=0)
    with pytest.raises(ValueError, match="oracle"):
        sql_text("oracle", "x", "integer", RULES)
