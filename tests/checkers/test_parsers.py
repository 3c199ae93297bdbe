"""Parsers against real sources: files on disk, the Spark catalog, SQLite and PostgreSQL, and an
HTTP server on loopback."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler

import pytest
import sqlalchemy as sa

from checkers import PredicateSingleDatasetChecker
from checkers.checker import FullScanChecker
from checkers.parsers import (
    CallableParser,
    CsvParser,
    HttpJsonParser,
    JsonParser,
    ParquetParser,
    SourceError,
    SqlQueryParser,
    TableParser,
)
from tests.conftest import POSTGRES_URL
from tests.http_stub import Reply, http_stub

# `connect`: records become a DataFrame through Arrow (which refuses an empty table); files are
# listed and read errors come from the server (tests/connect_paths.py). A source that fails before
# any DataFrame exists (a callable, an unreachable database or API) is the same on either session.


def rows_of(df) -> list[tuple]:
    return sorted(tuple(r) for r in df.collect())


@pytest.mark.connect
def test_csv_with_promised_schema(spark, tmp_path):
    path = tmp_path / "bookings.csv"
    path.write_text("id,amount\n1,2.5\n2,\n")
    df = CsvParser(str(path), schema="id int, amount double").load(spark)
    assert df.schema.simpleString() == "struct<id:int,amount:double>"
    assert rows_of(df) == [(1, 2.5), (2, None)]


@pytest.mark.connect
def test_csv_malformed_rows_fail_the_check_with_the_cause(spark, tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("id,amount\n1,2.5\n2,not-a-number\n")
    df = CsvParser(str(path), schema="id int, amount double").load(spark)
    result = PredicateSingleDatasetChecker(df, "amount > 0").run()
    assert result.error is not None and "Malformed" in result.error


def _scan_error(parser, spark) -> str:
    result = FullScanChecker(parser.load(spark), parser.describe(), parser.locate_malformed).run()
    assert result.error is not None
    return result.error


@pytest.mark.connect
def test_a_malformed_csv_row_is_named_by_its_file_and_line(spark, tmp_path):
    """Spark's error names no line: the file and line are found by reading again (PERMISSIVE,
    then as text), across the splits Spark cuts a file into, blank lines and CRLF counted."""
    (tmp_path / "day=1").mkdir()
    (tmp_path / "day=1/a.csv").write_text("id,email,amount\n1,a@example.com,10\n")
    (tmp_path / "day=2").mkdir()
    good = [f"{n},p{n}@example.com,{n}" for n in range(2, 300)]
    lines = ["id,email,amount", "", *good[:200], '999,"secret@example.com,20', *good[200:]]
    (tmp_path / "day=2/b.csv").write_bytes("\r\n".join(lines).encode())
    spark.conf.set("spark.sql.files.maxPartitionBytes", "1024")  # the file is read in 7 splits
    try:
        for schema in ("id int, email string, amount int", None):
            error = _scan_error(CsvParser(str(tmp_path), schema=schema), spark)
            assert f"is malformed at {tmp_path}/day=2/b.csv, line 203: " in error, error
            assert "secret@example.com" not in error
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")


@pytest.mark.connect
def test_a_malformed_json_line_is_named_by_its_file_and_line(spark, tmp_path):
    path = tmp_path / "events.json"
    path.write_text('{"id": 1}\n{"id": 2}\n{"id": "two"}\n{"id": 3}\n')
    error = _scan_error(JsonParser(str(path), schema="id long"), spark)
    assert f"JSON {path} is malformed at {path}, line 3: " in error, error


@pytest.mark.connect
def test_csv_header_that_breaks_the_promise_is_an_error(spark, tmp_path):
    path = tmp_path / "renamed.csv"
    path.write_text("id,total\n1,2.5\n")
    df = CsvParser(str(path), schema="id int, amount double").load(spark)
    result = PredicateSingleDatasetChecker(df, "amount > 0").run()
    assert result.error is not None and "amount" in result.error


@pytest.mark.connect
def test_missing_file_is_a_source_error(spark, tmp_path):
    with pytest.raises(SourceError, match=r"cannot read CSV .*nowhere\.csv"):
        CsvParser(str(tmp_path / "nowhere.csv")).load(spark)


@pytest.mark.connect
def test_json_lines_with_lazy_path(spark, tmp_path):
    path = tmp_path / "events.json"
    path.write_text('{"id": 1, "kind": "a"}\n{"id": 2, "kind": null}\n')
    df = JsonParser(lambda: str(path), schema="id long, kind string").load(spark)
    assert rows_of(df) == [(1, "a"), (2, None)]


@pytest.mark.connect
def test_parquet_schema_promise_is_checked_without_reading_data(spark, tmp_path):
    path = str(tmp_path / "lake")
    spark.createDataFrame([(1, "x")], "id int, name string").write.parquet(path)
    assert ParquetParser(path, schema="id int").load(spark).count() == 1
    with pytest.raises(SourceError) as raised:
        ParquetParser(path, schema="id bigint, email string").load(spark)
    assert "column 'id' is int, promised bigint" in str(raised.value)
    assert "column 'email' is missing" in str(raised.value)


@pytest.mark.connect
def test_table_parser(spark):
    spark.createDataFrame([(1,)], "id int").createOrReplaceTempView("parser_test_table")
    assert rows_of(TableParser("parser_test_table").load(spark)) == [(1,)]
    with pytest.raises(SourceError, match="no_such_table"):
        TableParser("no_such_table").load(spark)


def test_callable_parser(spark):
    parser = CallableParser(lambda s: s.range(3), name="three numbers")
    assert parser.load(spark).count() == 3 and parser.describe() == "three numbers"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database(request, tmp_path) -> Iterator[tuple[str, str]]:
    url = f"sqlite:///{tmp_path / 'ops.db'}" if request.param == "sqlite" else POSTGRES_URL
    table = f"flights_{uuid.uuid4().hex[:8]}"
    engine = sa.create_engine(url)
    with engine.begin() as connection:
        connection.execute(
            sa.text(f"CREATE TABLE {table} (id INTEGER, origin VARCHAR(3), ingested_at TIMESTAMP)")
        )
        connection.execute(
            sa.text(f"INSERT INTO {table} VALUES (:id, :origin, :at)"),
            [
                {"id": 1, "origin": "JFK", "at": "2013-01-01 05:00:00"},
                {"id": 2, "origin": "EWR", "at": "2013-01-01 06:00:00"},
                {"id": 3, "origin": "JFK", "at": None},
            ],
        )
    yield url, table
    with engine.begin() as connection:
        connection.execute(sa.text(f"DROP TABLE {table}"))
    engine.dispose()


@pytest.mark.connect
def test_sql_query_binds_parameters_and_casts_to_the_promise(spark, database):
    url, table = database
    parser = SqlQueryParser(
        url,
        f"SELECT id, ingested_at FROM {table} WHERE origin = :origin ORDER BY id",
        params={"origin": "JFK"},
        schema="id long, ingested_at timestamp",
    )
    df = parser.load(spark)
    assert df.schema.simpleString() == "struct<id:bigint,ingested_at:timestamp>"
    assert [r.id for r in df.collect()] == [1, 3]
    assert str(df.collect()[0].ingested_at) == "2013-01-01 05:00:00"
    injected = SqlQueryParser(
        url, f"SELECT id FROM {table} WHERE origin = :origin", params={"origin": "JFK' OR '1'='1"}
    )
    assert injected.load(spark).count() == 0  # a bound value, never SQL


@pytest.mark.connect
def test_sql_empty_result_keeps_columns(spark, database):
    url, table = database
    df = SqlQueryParser(url, f"SELECT id, origin FROM {table} WHERE id < 0").load(spark)
    assert df.columns == ["id", "origin"] and df.count() == 0


def test_unreachable_database_is_a_source_error_without_the_password(spark):
    parser = SqlQueryParser("postgresql+psycopg://dq:s3cret@127.0.0.1:1/ops", "SELECT 1")
    with pytest.raises(SourceError) as raised:
        parser.load(spark)
    assert "127.0.0.1" in str(raised.value) and "s3cret" not in str(raised.value)


def _api(request: BaseHTTPRequestHandler) -> Reply:
    if request.path.startswith("/payouts"):
        body = {
            "data": {"items": [{"id": "p1", "amount": 10}, {"id": "p2", "amount": None}]},
            "auth": request.headers.get("Authorization"),
            "path": request.path,
        }
        return Reply(200, json.dumps(body).encode())
    if request.path == "/broken":
        return Reply(500, b"oops")
    return Reply(200, b"<html>not json</html>")


@pytest.fixture(scope="module")
def api() -> Iterator[str]:
    with http_stub(_api) as url:
        yield url


@pytest.mark.connect
def test_http_json_records(spark, api, monkeypatch):
    monkeypatch.setenv("PAYOUTS_TOKEN", "Bearer t0ken")
    parser = HttpJsonParser(
        f"{api}/payouts",
        records_path=("data", "items"),
        query=(("since", "2026-01-01"),),
        headers_from_env=(("Authorization", "PAYOUTS_TOKEN"),),
        schema="id string, amount double",
    )
    df = parser.load(spark)
    assert df.schema.simpleString() == "struct<id:string,amount:double>"
    assert rows_of(df) == [("p1", 10.0), ("p2", None)]


@pytest.mark.parametrize(
    ("path", "records_path", "message"),
    [
        ("/broken", (), "HTTP 500"),
        ("/html", (), "did not return JSON"),
        ("/payouts", ("rows",), "no 'rows'"),
        ("/payouts", ("data",), "list of JSON objects"),
    ],
)
def test_http_failures_are_source_errors(spark, api, path, records_path, message):
    with pytest.raises(SourceError, match=message):
        HttpJsonParser(f"{api}{path}", records_path=records_path).load(spark)


def test_http_unreachable_and_missing_secret(spark, monkeypatch):
    with pytest.raises(SourceError, match="unreachable"):
        HttpJsonParser("http://127.0.0.1:1/x").load(spark)
    monkeypatch.delenv("NO_SUCH_TOKEN", raising=False)
    with pytest.raises(SourceError, match=r"named by headers_from_env\['A'\] is not set"):
        HttpJsonParser("http://127.0.0.1:1/x", headers_from_env=(("A", "NO_SUCH_TOKEN"),)).load(
            spark
        )
