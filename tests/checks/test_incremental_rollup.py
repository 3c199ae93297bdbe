"""The rollup of incremental checks' frequency tables: a run over one new partition merges the
stable partitions' rollup and the new partition's table (two stored tables, not one per
partition), and stays equal to a recomputation after an append, a rewrite and a delete. A
rollup that no longer matches the stored tables (a kill between storing a partition's states and
the rollup, a rollup of other partitions, a lost table) is ignored and rebuilt; one holding
wrong counts is found by the drift guard and forgotten."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import pandas as pd
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
import sqlalchemy as sa

from alerting import EscalationPolicy
from checkers.engine_tables import partition_states
from checkers.metrics import Distinctness, Uniqueness
from checkers.metrics.frequencies import COUNT
from checkers.metrics.rollups import COVERS, REFRESH_AFTER, ROLLUP, fold, load_rollup
from checkers.parsers import HivePartitions, ParquetParser
from checks import QualityCheck
from scheduling.drift import guard
from scheduling.schema import project_database
from scheduling.settings import Settings
from scheduling.tick.evaluate import evaluate_checks
from scheduling.tick.partition_store import PartitionStore
from tests.incremental_helpers import (
    incremental_metrics,
    partition_store,
    same_as_scratch,
    write_day,
)
from tests.metrics.jobs import count_jobs

START = dt.date(2024, 3, 1)
NOW = dt.datetime(2024, 6, 1, tzinfo=dt.UTC)
DAYS = REFRESH_AFTER + 2
REWRITTEN = 2_000_000_000  # a rewrite's modification time, whatever the clock's resolution
FREQUENCY = [Uniqueness(("carrier", "flight")), Distinctness(("carrier",))]


def day_frame(i: int, *, shift: int = 0) -> pd.DataFrame:
    """Eight flights of day `i`; every third day repeats the first flight number of the day
    before, so uniqueness depends on which days are merged."""
    flights = [8 * i + n + shift for n in range(8)]
    if i % 3 == 2:
        flights[0] = 8 * (i - 1)
    return pd.DataFrame(
        {
            "carrier": ["AA" if n % 2 else "UA" for n in range(8)],
            "flight": flights,
            "arr_delay": [float((i * 7 + n * 3) % 50) for n in range(8)],
        }
    )


def day(i: int) -> dt.date:
    return START + dt.timedelta(days=i)


def _suite(root: Path, name: str) -> type[QualityCheck]:
    source = ParquetParser(str(root), partitioning=HivePartitions(("day",)))
    return incremental_metrics(
        name,
        source,
        lambda check: (
            check.has_uniqueness(["carrier", "flight"], lambda v: v > 0.5)
            .has_distinctness(["carrier"], lambda v: v > 0.0)
            .has_completeness("arr_delay", lambda v: v == 1.0)
            .has_approx_quantile("arr_delay", 0.5, lambda v: v < 40)
        ),
    )


def _run(spark, check, store):
    outcome = evaluate_checks([check], spark=spark, now=NOW, partitions=store)[0]
    same_as_scratch(spark, [check], [outcome], NOW)
    return outcome


def tables_merged(store: PartitionStore, check: str) -> int:
    """How many stored frequency tables a merge of the check's partitions reads now."""
    parts = store.load(check, list(store.known(check)), FREQUENCY)
    _, tables = fold(FREQUENCY, parts, load_rollup(store.states, check, FREQUENCY))
    return tables


def _first_run(spark, tmp_path: Path, name: str) -> tuple[Path, PartitionStore, type[QualityCheck]]:
    """A lake of DAYS days, a store, and the check `name` over them after its first run."""
    lake, store = tmp_path / "lake", partition_store(tmp_path)
    check = _suite(lake, name)
    for i in range(DAYS):
        write_day(lake, day(i), day_frame(i))
    _run(spark, check, store)
    return lake, store, check


@pytest.mark.classic_only  # jobs are counted through the SparkContext
def test_one_new_partition_merges_the_rollup_and_its_own_table(spark, tmp_path):
    lake, store, check = _first_run(spark, tmp_path, "r1")  # every day read and rolled up
    assert tables_merged(store, "r1") == 1

    write_day(lake, day(DAYS), day_frame(DAYS))
    outcome, jobs = count_jobs(
        spark, lambda: evaluate_checks([check], spark=spark, now=NOW, partitions=store)[0]
    )
    assert outcome.reading["partitions_read"] == 1
    assert jobs <= 4, jobs
    same_as_scratch(spark, [check], [outcome], NOW)
    assert tables_merged(store, "r1") == 2  # the rollup of DAYS days and the new day's table


@pytest.mark.connect  # the rollup is written and read through the server
def test_rewritten_and_deleted_partitions_leave_the_rollup_and_stay_exact(spark, tmp_path):
    lake, store, check = _first_run(spark, tmp_path, "r2")
    write_day(lake, day(DAYS), day_frame(DAYS))
    _run(spark, check, store)

    write_day(lake, day(4), day_frame(4, shift=-32), mtime=REWRITTEN)  # now repeats day 0's flights
    rewritten = _run(spark, check, store)
    assert rewritten.reading["partitions_read"] == 1
    assert tables_merged(store, "r2") == 1  # the rollup no longer held day 4: rebuilt whole

    shutil.rmtree(lake / f"day={day(2).isoformat()}")
    deleted = _run(spark, check, store)
    assert deleted.reading == {"rows_read": 0, "partitions_read": 0, "partitions": DAYS}
    assert tables_merged(store, "r2") == 1


def _rollup_rows(store: PartitionStore, check: str) -> list[dict]:
    table = partition_states
    query = sa.select(table).where(table.c.check_name == check, table.c.partition_key == ROLLUP)
    with store.engine.connect() as connection:
        return [dict(r) for r in connection.execute(query).mappings()]


def _put_rollup_rows(store: PartitionStore, check: str, rows: list[dict]) -> None:
    table = partition_states
    with store.engine.begin() as connection:
        connection.execute(
            table.delete().where(table.c.check_name == check, table.c.partition_key == ROLLUP)
        )
        connection.execute(table.insert(), rows)


def test_a_rollup_left_by_a_kill_is_ignored_and_rebuilt(spark, tmp_path):
    lake, store, check = _first_run(spark, tmp_path, "r3")
    before = _rollup_rows(store, "r3")

    # A run stores the rewritten day's states, then is killed before its rollup: the store
    # keeps the rollup of the earlier tables, day 5's old one among them.
    write_day(lake, day(5), day_frame(5, shift=-40), mtime=REWRITTEN)
    _run(spark, check, store)
    _put_rollup_rows(store, "r3", before)
    assert tables_merged(store, "r3") == DAYS  # the stale rollup is not used
    quiet = _run(spark, check, store)  # equal to a recomputation, so not merged with it
    assert quiet.reading["partitions_read"] == 0
    assert tables_merged(store, "r3") == 1  # and rebuilt

    # A rollup claiming a partition the check does not have is no rollup of its partitions.
    rows = _rollup_rows(store, "r3")
    for row in rows:
        payload = json.loads(row["payload"])
        payload[COVERS]["day=1999-01-01"] = str(tmp_path / "elsewhere")
        row["payload"] = json.dumps(payload)
    _put_rollup_rows(store, "r3", rows)
    assert tables_merged(store, "r3") == DAYS
    _run(spark, check, store)
    assert tables_merged(store, "r3") == 1

    # A rollup whose table is gone is ignored too.
    location = json.loads(_rollup_rows(store, "r3")[0]["payload"])["location"]
    shutil.rmtree(location)
    assert tables_merged(store, "r3") == DAYS
    _run(spark, check, store)
    assert tables_merged(store, "r3") == 1


def _doubled(location: str) -> None:
    """Every count of the rollup's table doubled in place: a rollup that names the right tables
    but holds wrong counts, as no run of ours writes."""
    for file in Path(location).glob("*/*.parquet"):
        table = pq.read_table(file)
        counts = pc.multiply(table.column(COUNT), 2)
        pq.write_table(table.set_column(table.schema.get_field_index(COUNT), COUNT, counts), file)


def test_the_drift_guard_finds_a_wrong_rollup_and_forgets_it(spark, tmp_path, monkeypatch):
    _, store, check = _first_run(spark, tmp_path, "r4")
    _doubled(json.loads(_rollup_rows(store, "r4")[0]["payload"])["location"])

    wrong = evaluate_checks([check], spark=spark, now=NOW, partitions=store)[0]
    monkeypatch.setenv("DQ_STATE_DIR", str(tmp_path))
    settings = Settings(project_database(str(store.engine.url)), {}, EscalationPolicy(routes={}))
    (report,) = guard([check], [wrong], now=NOW, settings=settings, spark=spark)
    assert report.differences and not report.forgotten  # every partition's states are right
    assert _rollup_rows(store, "r4") == []
    _run(spark, check, store)  # merged from the tables again, and rolled up anew
    assert tables_merged(store, "r4") == 1
