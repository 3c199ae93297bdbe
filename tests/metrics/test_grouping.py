"""The shared grouping query: a lone multi-column set is a plain group-by (no Expand, no grouping
id), several share GROUPING SETS, and both give the same tables and metrics, NULL keys included."""

from __future__ import annotations

import io
from collections import Counter
from contextlib import redirect_stdout

import pytest
from pyspark.sql import DataFrame

from checkers.metrics import (
    CountDistinct,
    Distinctness,
    DuplicateRowCount,
    MutualInformation,
    Uniqueness,
    UniqueValueRatio,
    _grouping,
    run_analysis,
)
from tests.metrics.jobs import count_jobs

SCHEMA = "a string, b int, c int"
# Partial and all-NULL keys, repeated, so that NULL groups are counted and kept apart.
ROWS = [
    ("x", 1, 1),
    ("x", 1, 2),
    ("x", None, 3),
    ("x", None, None),
    (None, 1, 1),
    (None, 1, 2),
    (None, None, 3),
    (None, None, -1),
    (None, None, None),
    ("y", 2, 4),
    ("z", None, 5),
]
ONE_SET = [
    Uniqueness(["a", "b"]),
    Distinctness(["b", "a"]),
    CountDistinct(["a", "b"]),
    UniqueValueRatio(["a", "b"]),
    DuplicateRowCount(["a", "b"]),
    MutualInformation(["a", "b"]),
]
FILTERED = [Uniqueness(["a", "b"], where="c > 0"), CountDistinct(["a", "b"], where="c > 0")]


@pytest.fixture(scope="module")
def data(spark):
    return spark.createDataFrame(ROWS, SCHEMA)


def _physical_plan(df: DataFrame) -> str:
    printed = io.StringIO()
    with redirect_stdout(printed):
        df.explain()
    return printed.getvalue()


def _table(df: DataFrame, analyzers, *, grouping_sets: bool = False) -> DataFrame:
    sets = _grouping.plan_sets(analyzers)
    layout = _grouping.run_layout(df.schema, sets)
    if grouping_sets:
        return _grouping._grouping_sets_table(df, sets, layout)
    return _grouping.frequency_table(df, sets, layout)


def _rows(table: DataFrame) -> Counter[tuple[object, ...]]:
    return Counter(tuple(row) for row in table.select(*sorted(table.columns)).collect())


@pytest.mark.parametrize("analyzers", [ONE_SET, FILTERED], ids=["one set", "one set with where"])
def test_a_lone_multi_column_set_is_a_plain_group_by(data, analyzers) -> None:
    plan = _physical_plan(_table(data, analyzers))
    assert "Expand" not in plan and "spark_grouping_id" not in plan, plan


def test_several_multi_column_sets_share_one_grouping_sets_query(data) -> None:
    plan = _physical_plan(_table(data, [*ONE_SET, Uniqueness(["a", "c"])]))
    assert "Expand" in plan and "spark_grouping_id" in plan, plan


@pytest.mark.parametrize("analyzers", [ONE_SET, FILTERED], ids=["one set", "one set with where"])
def test_plain_and_grouping_sets_tables_are_the_same(data, analyzers) -> None:
    """The stored table: one row per key, all-NULL and partly NULL keys as groups of their own."""
    table = _table(data, analyzers)
    assert _rows(table) == _rows(_table(data, analyzers, grouping_sets=True))
    assert set(_rows(table).values()) == {1}  # each key once
    assert table.where(~table[_grouping.KEYED]).count() == 1  # the all-NULL key


def test_plain_and_grouping_sets_metrics_are_the_same(data) -> None:
    lone = run_analysis(data, ONE_SET)
    shared = run_analysis(data, [*ONE_SET, Uniqueness(["a", "c"])])
    both = run_analysis(data, ONE_SET + FILTERED)  # two sets: (a, b) and (a, b | c > 0)
    filtered = run_analysis(data, FILTERED)
    for analyzer in ONE_SET:
        assert lone.metric(analyzer).value == shared.metric(analyzer).value, analyzer
        assert lone.metric(analyzer).value == both.metric(analyzer).value, analyzer
    for analyzer in FILTERED:
        assert filtered.metric(analyzer).value == both.metric(analyzer).value, analyzer
    # keyed (a, b): (x,1)x2, (x,NULL)x2, (NULL,1)x2, (y,2), (z,NULL) -> 8 rows, 5 keys, 2 singles
    assert lone.metric(Uniqueness(["a", "b"])).value == pytest.approx(2 / 8)
    assert lone.metric(CountDistinct(["a", "b"])).value == 5.0
    assert lone.metric(DuplicateRowCount(["a", "b"])).value == 6.0
    # c > 0 keeps (x,1)x2, (x,NULL)x1, (NULL,1)x2, (y,2), (z,NULL): 7 rows, 5 keys, 3 singles
    assert filtered.metric(FILTERED[0]).value == pytest.approx(3 / 7)
    assert filtered.metric(FILTERED[1]).value == 5.0


def test_stored_states_are_the_same(data) -> None:
    """Each set's frequency state (what a state store keeps) is equal on both paths."""
    sets = _grouping.plan_sets(ONE_SET)
    layout = _grouping.run_layout(data.schema, sets)
    plain = _grouping.set_states(_table(data, ONE_SET), None, sets, layout)
    grouped = _grouping.set_states(_table(data, ONE_SET, grouping_sets=True), None, sets, layout)
    for s in sets:
        assert _rows(plain[s].frequencies) == _rows(grouped[s].frequencies)


@pytest.mark.classic_only
def test_a_lone_set_with_stacked_columns_is_still_one_job(spark, data) -> None:
    analyzers = [*ONE_SET, CountDistinct("a"), Uniqueness("c"), CountDistinct("b", where="c > 0")]
    result, jobs = count_jobs(spark, lambda: run_analysis(data, analyzers))
    assert jobs == result.spark_actions == 1
    assert all(m.ok for m in result), [m for m in result if not m.ok]
