"""Monoid laws for every state type, on random data split at random: associativity,
commutativity, identity, and state(A + B + C) = state(A).merge(state(B)).merge(state(C))."""

from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from checkers.metrics import (
    ApproxCountDistinct,
    ApproxQuantile,
    Completeness,
    Correlation,
    DataType,
    ExactQuantile,
    FrequencyState,
    Histogram,
    HllState,
    InterquartileRange,
    KllState,
    Maximum,
    Minimum,
    Size,
    StandardDeviation,
    Sum,
    Uniqueness,
    run_analysis,
)
from checkers.metrics._serde import _KINDS
from checkers.metrics.samples import BottomK, DistinctBottomK, DistinctCount, ThetaState

SCHEMA = "x int, y double, s string"
ANALYZERS = [
    Size(),
    Completeness("s"),
    Sum("y"),
    StandardDeviation("y"),
    Correlation("x", "y"),
    Minimum("x"),
    Maximum("y"),
    DataType("s"),
    ApproxCountDistinct("s"),
    ApproxQuantile("y", 0.5),
    Uniqueness(["x", "s"]),
    ExactQuantile("y", 0.5),
    InterquartileRange("y"),
    Histogram("x", bins=(-5, 0, 5)),
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


def same(first, second) -> bool:
    """Equality of two states of one type: floats to rounding, sketches by what they answer."""
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
        return frequencies(first) == frequencies(second)
    for field in dataclasses.fields(first):
        a, b = getattr(first, field.name), getattr(second, field.name)
        if isinstance(a, float) or isinstance(b, float):
            if a is None or b is None or not math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-6):
                return False
        elif a != b:
            return False
    return True


def frequencies(state: FrequencyState) -> list[tuple[object, ...]]:
    if state.frequencies is None:
        return []
    return sorted((tuple(r) for r in state.frequencies.collect()), key=repr)


def zero_of(analyzer, state):
    return (
        FrequencyState.zero(state.columns)
        if isinstance(state, FrequencyState)
        else analyzer.zero_state()
    )


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=rows, cut_a=st.integers(0, 40), cut_b=st.integers(0, 40))
def test_states_form_a_commutative_monoid_and_merge_like_the_union(
    spark, data, cut_a, cut_b
) -> None:
    first, second = sorted((min(cut_a, len(data)), min(cut_b, len(data))))
    parts = [data[:first], data[first:second], data[second:]]
    analyzers = [*ANALYZERS, *sample_analyzers()]
    results = [run_analysis(spark.createDataFrame(p, SCHEMA), analyzers) for p in parts]
    whole = run_analysis(spark.createDataFrame(data, SCHEMA), analyzers)
    assert covered_state_types([whole]) == set(_KINDS.values())  # every registered state type
    for analyzer in analyzers:
        a, b, c = (r.states[analyzer] for r in results)
        assert same(a.merge(b), b.merge(a)), analyzer
        assert same(a.merge(b).merge(c), a.merge(b.merge(c))), analyzer
        zero = zero_of(analyzer, a)
        assert same(a.merge(zero), a) and same(zero.merge(a), a), analyzer
        assert same(a.merge(b).merge(c), whole.states[analyzer]), analyzer
