"""Parsers give up at their deadline on their own: HTTP within a total deadline (hanging and
trickling servers), SQL through connect and statement timeouts on PostgreSQL, MariaDB and SQLite.
Each load runs in a thread the test waits for with a bound, so a regression fails, not hangs."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable

import pytest

from checkers.parsers import CsvParser, HttpJsonParser, SourceError, SqlQueryParser
from tests.checkers.slow_sources import silent_listener, slow_api
from tests.conftest import MARIADB_URL, POSTGRES_URL

#: A generous bound for "ended at its deadline" (1 s), far below the faults' own delays.
BOUND_S = 12.0


def finishes(load: Callable[[], object], bound_s: float = BOUND_S) -> tuple[object, float]:
    """What `load` returned or raised, and how long it took; fails if it runs past `bound_s`."""
    outcome: list[object] = []
    started = time.monotonic()

    def run() -> None:
        try:
            outcome.append(load())
        except Exception as exc:
            outcome.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(bound_s)
    assert not thread.is_alive(), f"still loading after {bound_s} s"
    return outcome[0], time.monotonic() - started


def test_deadline_must_be_positive():
    with pytest.raises(ValueError, match="deadline_s must be a positive"):
        CsvParser("x.csv", deadline_s=0)
    assert CsvParser("x.csv", deadline_s=5) != CsvParser("x.csv")  # part of the source's identity
    assert CsvParser("x.csv", deadline_s=5) == CsvParser("x.csv", deadline_s=5)


@pytest.mark.parametrize("path", ["/hang", "/trickle", "/trickle-headers"])
def test_http_has_a_total_deadline(spark, path):
    # The trickles send a byte every 2 s, within any per-read timeout longer than that (here 3 s,
    # the deadline): only a total deadline ends them before their two minutes.
    with slow_api() as api:
        parser = HttpJsonParser(f"{api}{path}", records_path=("data",), deadline_s=3)
        error, took = finishes(lambda: parser.load(spark))
    assert isinstance(error, SourceError)
    assert str(error) == f"{parser.describe()} timed out after 3 s"
    assert took < BOUND_S


def test_http_within_its_deadline_reads_everything(spark):
    with slow_api() as api:
        df = HttpJsonParser(f"{api}/ok", records_path=("data",), deadline_s=5).load(spark)
        assert sorted(r.id for r in df.collect()) == ["a", "b"]


@pytest.mark.postgres
def test_silent_postgres_server_times_out_at_connect(spark):
    with silent_listener() as (port, accepted):
        url = f"postgresql+psycopg://dq@127.0.0.1:{port}/ops"
        error, took = finishes(lambda: SqlQueryParser(url, "SELECT 1", deadline_s=1).load(spark))
        assert accepted  # it did connect; the server never answered
    # libpq's connect timeout is at least 2 s; the loader reports the source at 1 s regardless.
    assert isinstance(error, SourceError) and "timed out after 1 s" in str(error)
    assert took < BOUND_S


@pytest.mark.postgres
def test_long_postgres_query_is_cancelled_by_statement_timeout(spark):
    parser = SqlQueryParser(POSTGRES_URL, "SELECT pg_sleep(30) AS slept", deadline_s=1)
    error, took = finishes(lambda: parser.load(spark))
    assert isinstance(error, SourceError)
    assert "timed out after 1 s" in str(error)
    assert "canceling statement due to statement timeout" in str(error)  # the server stopped it
    assert took < BOUND_S


@pytest.mark.postgres
def test_postgres_url_options_are_kept(spark):
    query = (
        "SELECT current_setting('search_path') AS path, "
        "(SELECT setting FROM pg_settings WHERE name = 'statement_timeout') AS ms"
    )
    own = f"{POSTGRES_URL}?options=-csearch_path%3Ddq_probe"
    [row] = SqlQueryParser(own, query, deadline_s=60).load(spark).collect()
    assert row.path == "dq_probe" and 0 < int(row.ms) <= 60_000  # theirs kept, ours added
    theirs = f"{POSTGRES_URL}?options=-cstatement_timeout%3D12345"
    [row] = SqlQueryParser(theirs, query, deadline_s=60).load(spark).collect()
    assert row.ms == "12345"  # a timeout the URL sets itself wins


@pytest.mark.mariadb
def test_long_mariadb_query_is_cut_by_max_statement_time(spark):
    parser = SqlQueryParser(MARIADB_URL, "SELECT SLEEP(30) AS slept", deadline_s=1)
    error, took = finishes(lambda: parser.load(spark))
    assert isinstance(error, SourceError)
    assert "timed out after 1 s" in str(error) and "max_statement_time exceeded" in str(error)
    assert took < BOUND_S


def test_silent_mariadb_server_is_cut_by_the_read_timeout(spark):
    # PyMySQL's connect_timeout covers only the TCP connect; without a read timeout a server
    # that accepts and never greets holds the load forever.
    with silent_listener() as (port, accepted):
        url = f"mysql+pymysql://root@127.0.0.1:{port}/ops"
        error, took = finishes(lambda: SqlQueryParser(url, "SELECT 1", deadline_s=1).load(spark))
        assert accepted
    assert isinstance(error, SourceError) and "timed out after 1 s" in str(error)
    assert took < BOUND_S


def test_long_sqlite_query_is_interrupted(spark, tmp_path):
    endless = (
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) "
        "SELECT count(*) AS rows FROM n"
    )
    parser = SqlQueryParser(f"sqlite:///{tmp_path / 'ops.db'}", endless, deadline_s=1)
    error, took = finishes(lambda: parser.load(spark))
    assert isinstance(error, SourceError)
    assert "timed out after 1 s" in str(error) and "interrupted" in str(error)
    assert took < BOUND_S


def test_locked_sqlite_database_waits_only_until_the_deadline(spark, tmp_path):
    path = tmp_path / "ops.db"
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("CREATE TABLE t (x INTEGER)")
    writer.execute("BEGIN EXCLUSIVE")  # readers wait on the busy timeout
    try:
        parser = SqlQueryParser(f"sqlite:///{path}", "SELECT x FROM t", deadline_s=1)
        error, took = finishes(lambda: parser.load(spark))
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert isinstance(error, SourceError)
    assert "timed out after 1 s" in str(error) and "database is locked" in str(error)
    assert took < BOUND_S
