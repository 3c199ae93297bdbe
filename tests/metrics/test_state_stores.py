"""State stores: round trips of every state kind, atomic writes, format versions, pruning.
Run against memory, files, SQLite and PostgreSQL."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
import sqlalchemy as sa

from checkers.metrics import (
    STATE_FORMAT_VERSION,
    ApproxCountDistinct,
    ApproxQuantile,
    Completeness,
    Correlation,
    DataType,
    FileStateStore,
    Histogram,
    InMemoryStateStore,
    Maximum,
    Mean,
    MinLength,
    Size,
    SqlStateStore,
    StandardDeviation,
    StateFormatError,
    Sum,
    Uniqueness,
    metrics_for_view,
    run_analysis,
)
from checkers.metrics.sql_state_store import states_table
from tests.conftest import POSTGRES_URL

ANALYZERS = [
    Size(),
    Completeness("s"),
    Sum("x"),
    Mean("x"),
    Maximum("x"),
    MinLength("s"),
    StandardDeviation("x"),
    Correlation("x", "y"),
    DataType("s"),
    ApproxCountDistinct("s"),
    ApproxQuantile("x", 0.5),
    Uniqueness("s"),
    Histogram("s"),
]
STORES = ["memory", "file", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


def make_store(kind: str, tmp_path: Path):
    if kind == "memory":
        return InMemoryStateStore(tmp_path / "freq")
    if kind == "file":
        return FileStateStore(tmp_path / "states")
    url = f"sqlite:///{tmp_path / 'dq.db'}" if kind == "sqlite" else POSTGRES_URL
    return SqlStateStore(url, frequency_root=tmp_path / "freq")


def tamper_version(store, dataset: str, partition: str) -> None:
    """Rewrite stored records as if an older dq-checkers had written them."""
    if isinstance(store, InMemoryStateStore):
        for record in store._records[(dataset, partition)].values():
            record["format_version"] = 0
    elif isinstance(store, FileStateStore):
        file = store._partition_dir(dataset, partition) / FileStateStore.FILE
        body = json.loads(file.read_text())
        for record in body["states"].values():
            record["format_version"] = 0
        file.write_text(json.dumps(body))
    else:
        with store.engine.begin() as connection:
            connection.execute(
                sa.update(states_table)
                .where(states_table.c.dataset == dataset)
                .values(format_version="0")
            )


@pytest.fixture(scope="module")
def parts(spark):
    schema = "x double, y double, s string"
    first = spark.createDataFrame([(1.0, 2.0, "a"), (2.0, 3.5, "b"), (None, 1.0, "a")], schema)
    second = spark.createDataFrame([(4.0, 8.0, "c"), (5.0, 9.0, None), (6.0, None, "a")], schema)
    return first, second


@pytest.mark.parametrize("kind", STORES)
def test_every_state_kind_round_trips(kind, tmp_path, parts) -> None:
    store = make_store(kind, tmp_path)
    dataset = f"ds-{uuid.uuid4().hex[:8]}"
    first, second = parts
    run_analysis(first, ANALYZERS, state_store=store, dataset=dataset, partition="p1")
    run_analysis(second, ANALYZERS, state_store=store, dataset=dataset, partition="p2")
    assert store.partitions(dataset) == ["p1", "p2"]
    expected = run_analysis(first.unionByName(second), ANALYZERS)
    view = metrics_for_view(store, ANALYZERS, dataset=dataset)
    for analyzer in ANALYZERS:
        got, want = view.metric(analyzer).value, expected.metric(analyzer).value
        assert got == pytest.approx(want) if not isinstance(want, dict) else got == want, analyzer
    # a fresh store object over the same storage sees the same states
    if kind != "memory":
        again = make_store(kind, tmp_path)
        assert metrics_for_view(again, [Mean("x")], dataset=dataset).metric(Mean("x")).value == 3.6


@pytest.mark.parametrize("kind", STORES)
def test_other_format_versions_are_a_clear_error(kind, tmp_path, parts) -> None:
    store = make_store(kind, tmp_path)
    dataset = f"ds-{uuid.uuid4().hex[:8]}"
    run_analysis(parts[0], [Mean("x")], state_store=store, dataset=dataset, partition="p1")
    tamper_version(store, dataset, "p1")
    with pytest.raises(
        StateFormatError, match=f"format version 0.*reads version {STATE_FORMAT_VERSION}"
    ):
        store.load(dataset, [Mean("x")], ["p1"])


@pytest.mark.parametrize("kind", STORES)
def test_saving_replaces_the_same_analyzers_and_keeps_the_others(kind, tmp_path, parts) -> None:
    store = make_store(kind, tmp_path)
    dataset = f"ds-{uuid.uuid4().hex[:8]}"
    first, second = parts
    run_analysis(first, [Mean("x"), Size()], state_store=store, dataset=dataset, partition="p")
    run_analysis(second, [Mean("x")], state_store=store, dataset=dataset, partition="p")
    view = metrics_for_view(store, [Mean("x"), Size()], dataset=dataset)
    assert view.metric(Mean("x")).value == 5.0  # replaced by the second run
    assert view.metric(Size()).value == 3.0  # kept from the first


def test_missing_partition_state_is_reported(tmp_path, parts) -> None:
    store = FileStateStore(tmp_path)
    run_analysis(parts[0], [Mean("x")], state_store=store, dataset="d", partition="p1")
    view = metrics_for_view(store, [Mean("x"), Size()], dataset="d", partitions=["p1"])
    assert view.metric(Mean("x")).value == 1.5
    assert "no stored state for dataset 'd' partition 'p1'" in view.metric(Size()).error
    none = metrics_for_view(store, [Size()], dataset="unknown")
    assert "no stored partitions" in none.metric(Size()).error


def test_file_store_write_is_atomic(tmp_path, parts) -> None:
    store = FileStateStore(tmp_path)
    run_analysis(parts[0], [Mean("x")], state_store=store, dataset="d", partition="p")
    with pytest.raises(TypeError):
        store._write("d", "p", {"broken": {"payload": object()}})  # fails half-way through json
    directory = store._partition_dir("d", "p")
    assert sorted(p.name for p in directory.iterdir() if p.is_file()) == ["states.json"]
    assert Mean("x") in store.load("d", [Mean("x")], ["p"])["p"]


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_sql_store_write_is_one_transaction(kind, tmp_path, parts) -> None:
    store = make_store(kind, tmp_path)
    dataset = f"ds-{uuid.uuid4().hex[:8]}"
    run_analysis(parts[0], [Mean("x")], state_store=store, dataset=dataset, partition="p")
    key = repr(Mean("x"))
    record = {"format_version": 1, "kind": "sum", "payload": object()}
    with pytest.raises(TypeError):
        store._write(dataset, "p", {key: record})  # the delete ran, then the insert failed
    assert Mean("x") in store.load(dataset, [Mean("x")], ["p"])["p"]


def test_replaced_frequency_tables_are_pruned(tmp_path, parts) -> None:
    store = FileStateStore(tmp_path)
    run_analysis(parts[0], [Uniqueness("s")], state_store=store, dataset="d", partition="p")
    run_analysis(parts[1], [Uniqueness("s")], state_store=store, dataset="d", partition="p")
    tables = [p for p in store._partition_dir("d", "p").iterdir() if p.name.startswith("freq-")]
    assert len(tables) == 1
    view = metrics_for_view(store, [Uniqueness("s")], dataset="d")
    assert view.metric(Uniqueness("s")).value == pytest.approx(1.0)  # c, a: one each
