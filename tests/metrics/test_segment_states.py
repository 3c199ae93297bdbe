"""States per partition and segment (`PerSegment`): one grouped pass, merged over partitions they
give each segment's metrics of the whole (a commutative monoid with {} as identity), and the
partition's unsegmented counts merge from them; segment values of every type survive a store."""

from __future__ import annotations

import datetime as dt
import decimal
from functools import reduce

import pytest

from checkers.metrics import (
    ApproxQuantile,
    Completeness,
    Maximum,
    Mean,
    NumMatchesState,
    Size,
    SqlStateStore,
    StandardDeviation,
    run_analysis,
)
from checkers.metrics.partitioned import analyze_partitions
from checkers.metrics.segment_states import PerSegment, SegmentStates

# The grouped pass's rows (struct keys of partition and segment) arrive through Arrow.
pytestmark = pytest.mark.connect

COLUMN = "__dq_partition"
INNER = [Size(), Completeness("y"), Mean("y"), StandardDeviation("y"), Maximum("x")]
SKETCH = ApproxQuantile("y", 0.5)
ROWS = [
    ("a", "u", 1, 1.5),
    ("a", "v", 2, None),
    ("a", None, 2, 3.0),
    ("b", "u", 3, 4.5),
    ("b", "w", 4, -1.0),
    ("c", "w", 5, 2.0),
    ("c", "u", 1, 2.0),
]


def _values(analyzer: PerSegment, state: SegmentStates) -> dict[object, object]:
    return {s: m.value for s, m in analyzer.metrics(state).items()}


def test_partition_states_per_segment_merge_into_each_segments_metrics(make_df):
    data = make_df(ROWS, f"{COLUMN} string, s string, x int, y double")
    per_segment = [PerSegment(a, ("s",)) for a in [*INNER, SKETCH]]
    found = analyze_partitions(data, [*per_segment, Size()], ["a", "b", "c", "gone"], column=COLUMN)
    assert not found.errors
    assert found.states["gone"][per_segment[0]] == SegmentStates()  # no rows: no segments
    # the partition's row count merged from its segments' (no pass of its own)
    assert [found.states[p][Size()].num_matches for p in "abc"] == [3, 2, 2]
    a, b, c = (found.states[p] for p in "abc")
    whole = run_analysis(data, [*INNER, SKETCH], segment_by=["s"])
    for analyzer in per_segment:
        x, y, z = a[analyzer], b[analyzer], c[analyzer]
        merged = x.merge(y).merge(z)
        assert _values(analyzer, merged) == _values(analyzer, x.merge(y.merge(z)))
        assert _values(analyzer, merged) == _values(analyzer, z.merge(x).merge(y))
        assert _values(analyzer, x.merge(SegmentStates())) == _values(analyzer, x)
        expected = {s: m.value for s, m in whole.segments(analyzer.analyzer).items()}
        assert _values(analyzer, merged) == pytest.approx(expected), analyzer


def test_segment_values_of_every_type_survive_a_store(tmp_path):
    segments = [
        None,
        "UA",
        7,
        2.5,
        True,
        dt.date(2024, 3, 1),
        dt.datetime(2024, 3, 1, 16, 16, 0, 250),
        decimal.Decimal("12.50"),
        ("UA", dt.date(2024, 3, 1)),
        b"\x00k",
    ]
    state = SegmentStates({s: NumMatchesState(i + 1) for i, s in enumerate(segments)})
    analyzer = PerSegment(Size(), ("s",))
    store = SqlStateStore(f"sqlite:///{tmp_path / 'dq.db'}", frequency_root=tmp_path / "freq")
    store.save("d", "p", {analyzer: state})
    loaded = store.load("d", [analyzer], ["p"])["p"][analyzer]
    assert loaded == state
    assert [type(s) for s in loaded.states] == [type(s) for s in segments]
    assert reduce(lambda x, y: x.merge(y), [loaded, state]).states["UA"] == NumMatchesState(4)
