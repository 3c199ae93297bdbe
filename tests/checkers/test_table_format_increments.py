"""Incremental checks on Delta and Iceberg tables keep states per data file: a commit's added files
are all a run reads, a deleted partition's (or day's) files drop their states, a compaction costs
a re-read of the rewritten files only, and the outcome equals a recomputation from scratch (also
through `dq run --full`)."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from checkers.parsers import DeltaParser, IcebergParser
from checks import QualityCheck
from scheduling.tick.evaluate import evaluate_checks
from scheduling.tick.partition_store import PartitionStore
from tests.checkers.lake_tables import DAYS, day_rows, iceberg_catalog, write_delta, write_iceberg
from tests.incremental_helpers import incremental_metrics, partition_store, same_as_scratch

NOW = dt.datetime(2024, 4, 1, tzinfo=dt.UTC)


def _check(source) -> type[QualityCheck]:
    return incremental_metrics(
        "order_totals",
        source,
        lambda check: (
            check.has_completeness("note", lambda v: v > 0.9)
            .has_mean("ratio", lambda v: v > 1)
            .has_max("id", lambda v: v < 1000)
        ),
    )


@pytest.fixture
def store(tmp_path) -> PartitionStore:
    return partition_store(tmp_path)


def _run(spark, check, store):
    [mine] = evaluate_checks([check], spark=spark, now=NOW, partitions=store)
    same_as_scratch(spark, [check], [mine], NOW)
    return mine


def test_a_delta_commit_is_read_alone_and_a_deleted_partition_drops_its_states(
    spark, tmp_path, store
):
    from deltalake import DeltaTable

    path = tmp_path / "orders"
    write_delta(path, DAYS[:2])
    check = _check(DeltaParser(str(path)))
    first = _run(spark, check, store)
    assert first.reading == {"rows_read": 16, "partitions_read": 2, "partitions": 2}

    write_delta(path, DAYS[2:])  # one commit, one added file
    second = _run(spark, check, store)
    assert second.reading == {"rows_read": 8, "partitions_read": 1, "partitions": 3}

    DeltaTable(str(path)).delete(f"day = '{DAYS[0].isoformat()}'")  # removes that day's file
    third = _run(spark, check, store)
    assert third.reading == {"rows_read": 0, "partitions_read": 0, "partitions": 2}
    assert all(not key.startswith(f"day={DAYS[0]}") for key in store.known("order_totals"))
    assert len(store.known("order_totals")) == 2


def test_an_iceberg_append_is_read_alone_and_a_deleted_day_drops_its_states(spark, tmp_path, store):
    from pyiceberg.expressions import EqualTo

    catalog, properties = iceberg_catalog(tmp_path / "iceberg")
    table = write_iceberg(catalog, "shop.orders", DAYS[:2])
    check = _check(IcebergParser("shop.orders", "lake", catalog_properties=properties))
    assert _run(spark, check, store).reading["rows_read"] == 16
    table.append(day_rows(DAYS[2]))
    assert _run(spark, check, store).reading == {
        "rows_read": 8,
        "partitions_read": 1,
        "partitions": 3,
    }
    first_day = {f.file.file_path for f in table.scan().plan_files()}
    table.delete(EqualTo("day", DAYS[0].isoformat()))  # every row of one file: the file goes
    first_day -= {f.file.file_path for f in table.scan().plan_files()}
    assert len(first_day) == 1
    assert _run(spark, check, store).reading == {
        "rows_read": 0,
        "partitions_read": 0,
        "partitions": 2,
    }
    assert len(store.known("order_totals")) == 2
    assert not any(path.endswith(key) for key in store.known("order_totals") for path in first_day)


def test_a_compaction_rereads_only_the_rewritten_files(spark, tmp_path, store):
    from deltalake import DeltaTable

    path = tmp_path / "orders"
    write_delta(path, DAYS)
    write_delta(path, DAYS)  # two files a day
    check = _check(DeltaParser(str(path)))
    assert _run(spark, check, store).reading["rows_read"] == 48

    day = DAYS[0].isoformat()
    compacted = DeltaTable(str(path)).optimize.compact(partition_filters=[("day", "=", day)])
    assert (compacted["numFilesRemoved"], compacted["numFilesAdded"]) == (2, 1)
    # the same rows in one new file: read once, the two old files' states dropped
    assert _run(spark, check, store).reading == {
        "rows_read": 16,
        "partitions_read": 1,
        "partitions": 5,
    }
    assert len(store.known("order_totals")) == 5


def test_dq_run_full_recomputes_a_delta_check_and_finds_no_drift(tmp_path, monkeypatch, capsys):
    from scheduling.cli import main

    write_delta(tmp_path / "orders", DAYS[:2])
    monkeypatch.setenv("DQ_CHECKS", "tests.checkers.lake_checks")
    monkeypatch.setenv("DQ_LAKE_DIR", str(tmp_path))
    monkeypatch.setenv("DQ_DATABASE_URL", f"sqlite:///{tmp_path / 'dq.db'}")
    monkeypatch.setenv("DQ_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("DQ_CONFIG", str(tmp_path / "none.toml"))
    command = ["run", "lake_order_totals", "--json", "--at", "2024-04-01T06:00:00"]
    assert main(command) == 0
    capsys.readouterr()
    write_delta(tmp_path / "orders", DAYS[2:])
    assert main([*command, "--full"]) == 0  # exit 5 on drift
    document = json.loads(capsys.readouterr().out)
    assert document["drift"] == [{"check": "lake_order_totals", "differences": [], "forgotten": []}]
    assert document["outcomes"][0]["rows_read"] == 8  # the run itself read the new commit only
