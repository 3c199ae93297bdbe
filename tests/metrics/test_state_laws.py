"""Monoid laws for every state type, on random data split at random: associativity,
commutativity, identity, and state(A + B + C) = state(A).merge(state(B)).merge(state(C))."""

from __future__ import annotations

import dataclasses
import functools
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from checkers.metrics import (
    ApproxCountDistinct,
    ApproxQuantile,
    ColumnCount,
    Completeness,
    Correlation,
    CustomSql,
    DataType,
    DuplicateRowCount,
    ExactQuantile,
    FrequencyState,
    HigherMomentsState,
    Histogram,
    HllState,
    InMemoryStateStore,
    InterquartileRange,
    KllState,
    Kurtosis,
    Maximum,
    Minimum,
    Predictability,
    PredictabilityState,
    RatioOfSums,
    Size,
    Skewness,
    StandardDeviation,
    Sum,
    Uniqueness,
    ZerosCount,
    merge_states,
    run_analysis,
)
from checkers.metrics._serde import _KINDS
from checkers.metrics.frequencies import StoredTable
from checkers.metrics.samples import BottomK, DistinctBottomK, DistinctCount, ThetaState
from checkers.metrics.segment_states import SegmentStates
from tests.conftest import CONNECT

pytestmark = pytest.mark.usefixtures("small_data_spark")

SCHEMA = "x int, y double, s string"
#: a statement's results over separate data do not combine: its merge is lawful, not the union's
CUSTOM_SQL = CustomSql("SELECT count(*) FROM primary WHERE x > 0")
ANALYZERS = [
    Size(),
    Completeness("s"),
    Sum("y"),
    StandardDeviation("y"),
    Skewness("y"),
    Kurtosis("x"),
    Correlation("x", "y"),
    Minimum("x"),
    Maximum("y"),
    DataType("s"),
    ApproxCountDistinct("s"),
    ApproxQuantile("y", 0.5),
    Uniqueness(["x", "s"]),
    ZerosCount("x"),
    RatioOfSums("y", "x"),
    DuplicateRowCount(["x", "s"]),
    ColumnCount(),
    CUSTOM_SQL,
    ExactQuantile("y", 0.5),
    InterquartileRange("y"),
    Histogram("x", bins=(-5, 0, 5)),
    Predictability("s", ["x"], test_fraction=0.5),
]


def sample_analyzers() -> list:
    """Failing-row samples (built with a session: Columns need one): bottom-k by hash among rows
    with x > 0, up to 3 distinct `s` among them, and how many distinct `s` they have."""
    return [
        BottomK(
            "rows", F.struct("x", "y", "s"), F.when(F.col("x") > 0, F.xxhash64("x", "y", "s")), 5
        ),
        DistinctBottomK(
            "keys",
            F.struct("s"),
            F.when(F.col("x") > 0, F.col("x") > 3),
            StructType([StructField("s", StringType())]),
            3,
        ),
        DistinctCount("distinct", F.when(F.col("x") > 0, F.col("s"))),
    ]


rows = st.lists(
    st.tuples(
        st.one_of(st.none(), st.integers(-5, 5)),
        st.one_of(st.none(), st.floats(-1e3, 1e3, allow_nan=False).map(lambda v: round(v, 3))),
        st.one_of(st.none(), st.sampled_from(["a", "b", "c", "12", "3.5", "true"])),
    ),
    max_size=40,
)


def covered_state_types(results) -> set[type]:
    return {type(state) for result in results for state in result.states.values()}


class Laws:
    """The pairs of states the laws say are equal, checked together at the end: every frequency
    table among them is read in one Spark job (a job per table made the test twice as slow)."""

    def __init__(self) -> None:
        self.pairs: list[tuple[object, object, object]] = []

    def equal(self, first, second, what: object) -> None:
        self.pairs.append((first, second, what))

    def check(self) -> None:
        tables = frequency_tables([state for a, b, _ in self.pairs for state in (a, b)])
        for first, second, what in self.pairs:
            assert same(first, second, tables), what


def frequency_tables(states) -> dict[int, list[str]]:
    """Each frequency state's rows (as sorted JSON), by the state's id, from one Spark job."""
    frames = {
        id(state): state.frequencies
        for state in states
        if isinstance(state, FrequencyState) and state.frequencies is not None
    }
    tables: dict[int, list[str]] = {key: [] for key in frames}
    if frames:
        rows = [
            frame.select(
                F.lit(key).alias("state"), F.to_json(F.struct(*frame.columns)).alias("row")
            )
            for key, frame in frames.items()
        ]
        for row in functools.reduce(DataFrame.unionByName, rows).collect():
            tables[row.state].append(row.row)
    return {key: sorted(rows) for key, rows in tables.items()}


def same(first, second, tables: dict[int, list[str]]) -> bool:
    """Equality of two states of one type: floats to rounding, sketches by what they answer,
    frequency tables by their rows (`tables`, from frequency_tables)."""
    if isinstance(first, HllState):
        return first.estimate() == pytest.approx(second.estimate(), rel=0.02)
    if isinstance(first, ThetaState):  # few values: the sketch counts them exactly
        return first.count() == second.count()
    if isinstance(first, KllState):
        a, b = first.load(), second.load()
        if a.n != b.n:
            return False
        # below k items a KLL sketch keeps every value, so its answers are exact
        return a.is_empty() or all(
            a.get_quantile(q) == b.get_quantile(q) for q in (0, 0.3, 0.5, 0.9, 1)
        )
    if isinstance(first, FrequencyState):
        return tables.get(id(first), []) == tables.get(id(second), [])
    if isinstance(first, HigherMomentsState):
        return same_higher_moments(first, second)
    for field in dataclasses.fields(first):
        a, b = getattr(first, field.name), getattr(second, field.name)
        if isinstance(a, float) or isinstance(b, float):
            if a is None or b is None or not math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-6):
                return False
        elif a != b:
            return False
    return True


def same_higher_moments(first: HigherMomentsState, second: HigherMomentsState) -> bool:
    """m3 and m4 to rounding of their scale (n·σ³ and n·σ⁴): on near-symmetric data m3 is close
    to 0, where a tolerance relative to m3 itself would ask more than floats can give."""

    def close(a: float, b: float, scale: float = 0.0) -> bool:
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9 * scale + 1e-6)

    n, m2 = first.n, max(first.m2, 0.0)
    return (
        n == second.n
        and close(first.avg, second.avg)
        and close(first.m2, second.m2)
        and close(first.m3, second.m3, m2**1.5 / math.sqrt(n) if n else 0.0)
        and close(first.m4, second.m4, m2**2 / n if n else 0.0)
    )


def union_part(state):
    """What state(A + B) = state(A).merge(state(B)) covers: the whole state, except for
    Predictability only its model: each part's held-out rows were scored by that part's model."""
    return state.model if isinstance(state, PredictabilityState) else state


def zero_of(analyzer, state):
    return (
        FrequencyState.zero(state.columns)
        if isinstance(state, FrequencyState)
        else analyzer.zero_state()
    )


#: Each example runs every analyzer four times (about 15 s): the laws are the merge code's, so the
#: Spark Connect pass, whose states are checked analyzer by analyzer elsewhere, runs fewer.
EXAMPLES = 4 if CONNECT else 8


# Every state type, sketch bytes included, arrives through Arrow over Connect.
# (tests/connect_paths.py)
@pytest.mark.connect
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=rows, cut_a=st.integers(0, 40), cut_b=st.integers(0, 40))
def test_states_form_a_commutative_monoid_and_merge_like_the_union(
    spark, data, cut_a, cut_b
) -> None:
    first, second = sorted((min(cut_a, len(data)), min(cut_b, len(data))))
    parts = [data[:first], data[first:second], data[second:]]
    analyzers = [*ANALYZERS, *sample_analyzers()]
    results = [run_analysis(spark.createDataFrame(p, SCHEMA), analyzers) for p in parts]
    whole = run_analysis(spark.createDataFrame(data, SCHEMA), analyzers)
    # every registered state type (states per segment: tests/metrics/test_segment_states.py)
    assert covered_state_types([whole]) == set(_KINDS.values()) - {SegmentStates}
    laws = Laws()
    for analyzer in analyzers:
        a, b, c = (r.states[analyzer] for r in results)
        # merges are pure: a.merge(b) and (a ⊕ b) ⊕ c are built once and checked under each law
        # that names them (each frequency table among them is one more plan to read)
        ab = a.merge(b)
        abc = ab.merge(c)
        laws.equal(ab, b.merge(a), ("commutative", analyzer))
        laws.equal(abc, a.merge(b.merge(c)), ("associative", analyzer))
        zero = zero_of(analyzer, a)
        laws.equal(a.merge(zero), a, ("right identity", analyzer))
        laws.equal(zero.merge(a), a, ("left identity", analyzer))
        if analyzer == CUSTOM_SQL:
            assert "cannot be combined" in analyzer.metric_from_state(ab).error
            continue
        whole_state = union_part(whole.states[analyzer])
        laws.equal(union_part(abc), whole_state, ("the union's", analyzer))
    laws.check()


#: The engine's merge (views over a store, incremental checks) runs every analyzer three times.
#: Not in the Connect pass: its states cross Arrow as in the test above, merge_states is Python
#: over them, and stored frequency tables are written and read through the server by the
#: `connect` tests of tests/checks/test_incremental.py and test_incremental_rollup.py.
MERGE_EXAMPLES = 3


@settings(max_examples=MERGE_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=rows, cut=st.integers(0, 40))
def test_the_engine_merge_of_stored_and_fresh_states_is_the_union(spark, data, cut) -> None:
    """merge_states, the one path from parts' states to the whole's (metrics_from_states, hence
    views and incremental checks): a part stored (its frequency tables unopened) and a part
    just computed merge, in either order, into the states of the whole; {} is the identity."""
    cut = min(cut, len(data))
    analyzers = [a for a in [*ANALYZERS, *sample_analyzers()] if a != CUSTOM_SQL]
    store = InMemoryStateStore()
    first, second, whole = (
        run_analysis(spark.createDataFrame(rows_, SCHEMA), analyzers, **where)
        for rows_, where in (
            (data[:cut], {"state_store": store, "dataset": "d", "partition": "a"}),
            (data[cut:], {}),
            (data, {}),
        )
    )
    stored = store.load("d", analyzers, ["a"])["a"]
    assert any(isinstance(s, StoredTable) for s in stored.values())
    laws = Laws()
    for parts in ([stored, second.states], [second.states, stored]):
        merged = merge_states(analyzers, parts)
        for analyzer in analyzers:
            whole_state = union_part(whole.states[analyzer])
            laws.equal(union_part(merged[analyzer]), whole_state, ("merged", analyzer))
    alone = merge_states(analyzers, [first.states, {}])
    for analyzer in analyzers:
        laws.equal(alone[analyzer], first.states[analyzer], ("identity {}", analyzer))
    laws.check()
