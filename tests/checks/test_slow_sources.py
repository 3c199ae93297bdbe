"""Acceptance: hanging, trickling and silent sources (HTTP, PostgreSQL, MariaDB) beside healthy
ones (CSV, Parquet, in-memory, HTTP) in one run. Each slow source is an ERROR at its deadline, the
healthy checks pass, and the run's wall time is bounded by the deadline, not by the delays."""

from __future__ import annotations

import datetime as dt
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from checkers import PredicateSingleDatasetChecker, Status
from checkers.parsers import (
    CallableParser,
    CsvParser,
    HttpJsonParser,
    ParquetParser,
    SqlQueryParser,
)
from checks import QualityCheck
from scheduling.runner import run_checks
from scheduling.settings import Settings
from tests.checkers.slow_sources import TRICKLE_EVERY_S, TRICKLED_BYTES, silent_listener, slow_api
from tests.conftest import MARIADB_URL, POSTGRES_URL

NOW = dt.datetime(2026, 11, 22, 12, 0, tzinfo=dt.UTC)
DEADLINE_S = 2
ROOMY_S = 120


def check_on(name: str, parser, predicate: str) -> type[QualityCheck]:
    def checker(self, data):
        return PredicateSingleDatasetChecker(data, predicate)

    body = {"parser": parser, "checker": checker, "name": name}
    return type(name.title().replace("_", ""), (QualityCheck,), body, register=False)


@pytest.mark.postgres
@pytest.mark.mariadb
def test_slow_sources_time_out_while_healthy_checks_pass(spark, tmp_path, monkeypatch):
    monkeypatch.setenv("DQ_SOURCE_DEADLINE_S", str(DEADLINE_S))
    monkeypatch.setenv("DQ_LOAD_PARALLELISM", "10")
    monkeypatch.setenv("DQ_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("DQ_CONFIG", str(tmp_path / "none.toml"))
    csv = tmp_path / "numbers.csv"
    csv.write_text("n,label\n1,a\n2,b\n3,c\n")
    parquet = tmp_path / "numbers.parquet"
    pq.write_table(pa.table({"n": [1, 2, 3]}), parquet)
    settings = Settings.from_environment(database_url=f"sqlite:///{tmp_path / 'dq.db'}")
    assert settings.source_deadline_s == DEADLINE_S and settings.load_parallelism == 10

    with slow_api() as api, silent_listener() as (silent_port, _):
        slow = {
            "http_hanging": HttpJsonParser(f"{api}/hang", records_path=("data",)),
            "http_trickling": HttpJsonParser(f"{api}/trickle", records_path=("data",)),
            "postgres_silent": SqlQueryParser(
                f"postgresql+psycopg://dq@127.0.0.1:{silent_port}/ops", "SELECT 1 AS n"
            ),
            "postgres_long_query": SqlQueryParser(POSTGRES_URL, "SELECT pg_sleep(30) AS n"),
            "mariadb_long_query": SqlQueryParser(MARIADB_URL, "SELECT SLEEP(30) AS n"),
        }
        # Spark work (CSV schema inference, Arrow transfers) can take more than 2 s on a busy
        # machine: the healthy sources get a deadline of their own.
        healthy = {
            "csv": CsvParser(str(csv), deadline_s=ROOMY_S),
            "parquet": ParquetParser(str(parquet), deadline_s=ROOMY_S),
            "in_memory": CallableParser(
                lambda spark: spark.createDataFrame([(1,), (2,)], "n int"),
                name="in memory",
                deadline_s=ROOMY_S,
            ),
            "http_ok": HttpJsonParser(f"{api}/ok", records_path=("data",), deadline_s=ROOMY_S),
        }
        checks = [check_on(name, parser, "n IS NOT NULL") for name, parser in slow.items()]
        checks += [
            check_on(name, parser, "amount > 0" if name == "http_ok" else "n > 0")
            for name, parser in healthy.items()
        ]
        started = time.monotonic()
        report = run_checks(checks, now=NOW, settings=settings)
        took = time.monotonic() - started

    outcomes = {o.check: o for o in report.outcomes}
    for name, parser in slow.items():
        outcome = outcomes[name]
        assert outcome.status is Status.ERROR, (name, outcome.error)
        assert outcome.error.startswith(f"{parser.describe()} timed out after 2 s"), outcome.error
        assert DEADLINE_S <= outcome.timings["load_s"] < DEADLINE_S + 5
    for name in healthy:
        assert outcomes[name].status is Status.PASSED, (name, outcomes[name].error)
    # One after another the slow sources took minutes (the trickle alone ~4, the silent server
    # forever); together the tick takes about one deadline plus the healthy checks' Spark work.
    delays = 30 + 30 + TRICKLED_BYTES * TRICKLE_EVERY_S + 30 + 30
    assert took < delays / 4, took
