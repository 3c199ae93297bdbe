"""One tick with hanging, trickling and silent sources (HTTP, PostgreSQL, MariaDB) beside healthy
ones (CSV, Parquet, in-memory, HTTP), on a SQLite project database and a 2 s source deadline
(tests/checks/test_slow_sources.py)."""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from checkers import PredicateSingleDatasetChecker
from checkers.parsers import (
    CallableParser,
    CsvParser,
    HttpJsonParser,
    ParquetParser,
    Parser,
    SqlQueryParser,
)
from checks import QualityCheck
from scheduling.runner import RunReport, run_checks
from scheduling.settings import Settings
from tests.checkers.slow_sources import TRICKLE_EVERY_S, TRICKLED_BYTES, silent_listener, slow_api
from tests.conftest import MARIADB_URL, POSTGRES_URL

NOW = dt.datetime(2026, 11, 22, 12, 0, tzinfo=dt.UTC)
DEADLINE_S = 2
ROOMY_S = 120
#: What the slow sources would hold a tick for, one after another (the silent one: forever).
DELAYS_S = 30 + 30 + TRICKLED_BYTES * TRICKLE_EVERY_S + 30 + 30


def slow_env(tmp_path: Path) -> dict[str, str]:
    """The environment of the tick: the deadline, room to load every source at once."""
    return {
        "DQ_SOURCE_DEADLINE_S": str(DEADLINE_S),
        "DQ_LOAD_PARALLELISM": "10",
        "DQ_STATE_DIR": str(tmp_path / "state"),
        "DQ_CONFIG": str(tmp_path / "none.toml"),
    }


def check_on(name: str, parser: Parser, predicate: str) -> type[QualityCheck]:
    def checker(self, data):  # type: ignore[no-untyped-def]
        return PredicateSingleDatasetChecker(data, predicate)

    body = {"parser": parser, "checker": checker, "name": name}
    return type(name.title().replace("_", ""), (QualityCheck,), body, register=False)


@dataclass
class SlowTick:
    settings: Settings
    slow: dict[str, Parser]  # check name -> its parser
    healthy: list[str]
    report: RunReport
    took: float  # the tick's wall time


def slow_sources_tick(tmp_path: Path) -> SlowTick:
    """The tick, in this process, with slow_env's variables set by the caller."""
    csv = tmp_path / "numbers.csv"
    csv.write_text("n,label\n1,a\n2,b\n3,c\n")
    parquet = tmp_path / "numbers.parquet"
    pq.write_table(pa.table({"n": [1, 2, 3]}), parquet)
    settings = Settings.from_environment(database_url=f"sqlite:///{tmp_path / 'dq.db'}")

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
    return SlowTick(settings, slow, list(healthy), report, took)
