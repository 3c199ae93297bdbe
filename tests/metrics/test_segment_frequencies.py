"""Frequency tables per partition and segment (`SegmentFrequency`): one table per partition with
the segment columns in its key, merged over partitions; grouping the merged table by segment
gives each segment's metrics as a segmented run from scratch does, in one aggregation."""

from __future__ import annotations

import pytest

from checkers.metrics import (
    CountDistinct,
    Distinctness,
    Entropy,
    Histogram,
    Uniqueness,
    UniqueValueRatio,
    merge_states,
    run_analysis,
)
from checkers.metrics._capped import TooManySegmentsError
from checkers.metrics.partitioned import analyze_partitions
from checkers.metrics.segment_frequencies import SegmentFrequency, segment_frequency_metrics

COLUMN = "__dq_partition"
ROWS = [
    ("a", "u", "x", 1),
    ("a", "u", "x", 2),
    ("a", "v", None, 2),
    ("a", None, "y", 3),
    ("b", "u", "y", 1),
    ("b", "w", "x", None),
    ("c", "w", "x", 5),
    ("c", "u", None, 1),
    ("c", "u", "z", 1),
]
SCHEMA = f"{COLUMN} string, s string, t string, k int"
INNER = [
    Uniqueness(("k",)),
    CountDistinct(("k",)),
    Distinctness(("k", "t")),
    UniqueValueRatio(("t",), where="k > 1"),
    Entropy("t"),
    Histogram("t"),
    Uniqueness(("s",)),  # the segment column itself
]


@pytest.mark.parametrize("by", [("s",), ("s", "t")])
def test_merged_tables_give_each_segments_metrics_of_a_recomputation(make_df, by):
    data = make_df(ROWS, SCHEMA)
    wrappers = [SegmentFrequency(a, by) for a in INNER]
    found = analyze_partitions(data, wrappers, ["a", "b", "c"], column=COLUMN)
    assert not found.errors
    merged = merge_states(wrappers, found.states.values())
    by_segment, actions = segment_frequency_metrics(wrappers, merged, max_segments=100)
    assert actions == 1  # every segment and analyzer in one aggregation
    scratch = run_analysis(data.drop(COLUMN), INNER, segment_by=list(by)).by_segment
    assert set(by_segment) == set(scratch)
    for segment, metrics in scratch.items():
        for analyzer in INNER:
            mine, theirs = by_segment[segment].get(analyzer), metrics.get(analyzer)
            assert (mine is None) == (theirs is None), (segment, analyzer)
            if mine is not None and theirs is not None:
                assert mine.error == theirs.error, (segment, analyzer)
                expected = theirs.value
                if isinstance(expected, float):  # entropy: sums of logs in another order
                    expected = pytest.approx(expected)
                assert mine.value == expected, (segment, analyzer)


def test_more_segments_than_the_cap_is_an_error_naming_the_columns(make_df):
    data = make_df(ROWS, SCHEMA)
    wrappers = [SegmentFrequency(CountDistinct(("k",)), ("s",))]
    found = analyze_partitions(data, wrappers, ["a", "b", "c"], column=COLUMN)
    merged = merge_states(wrappers, found.states.values())
    with pytest.raises(TooManySegmentsError, match="segments of s:"):
        segment_frequency_metrics(wrappers, merged, max_segments=2)
