"""Where the demo warehouse lives (read when a check runs, so the environment decides) and the
parsers the example checks share: checks that read the same parser object share one read. The
lake's flights are partitioned by day (month=/day= directories): incremental checks read only the
days that are new or changed since their last run."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from checkers.parsers import HivePartitions, ParquetParser

DEMO_DIR_ENV = "DQ_DEMO_DIR"
DEMO_DATABASE_ENV = "DQ_DEMO_DATABASE_URL"


def demo_dir() -> Path:
    return Path(os.environ.get(DEMO_DIR_ENV, ".dq/demo")).resolve()


def demo_database_url() -> str:
    """The operational database (a secret in real life: it comes from the environment)."""
    return os.environ.get(DEMO_DATABASE_ENV) or f"sqlite:///{demo_dir() / 'ops.db'}"


def lake_path(table: str) -> str:
    return str(demo_dir() / "lake" / table)


@dataclass(frozen=True)
class LakePath:
    """A lake table's path, resolved when a check runs. Unlike a lambda, it has the same repr in
    every process: incremental checks keep their stored states while their parser's repr stays."""

    table: str

    def __call__(self) -> str:
        return lake_path(self.table)


FLIGHTS_SCHEMA = (
    "id long, year long, month int, day int, dep_time double, sched_dep_time long, "
    "dep_delay double, arr_time double, sched_arr_time long, arr_delay double, carrier string, "
    "flight long, tailnum string, origin string, dest string, air_time double, distance long, "
    "time_hour timestamp"
)

FLIGHTS = ParquetParser(
    LakePath("flights"), schema=FLIGHTS_SCHEMA, partitioning=HivePartitions(("month", "day"))
)
AIRPORTS = ParquetParser(LakePath("airports"), schema="faa string, name string")
PLANES = ParquetParser(LakePath("planes"), schema="tailnum string")
