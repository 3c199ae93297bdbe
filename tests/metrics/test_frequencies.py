"""Grouping analyzers: CountDistinct, Distinctness, Uniqueness, UniqueValueRatio, Entropy,
MutualInformation and Histogram, all from frequency tables."""

from __future__ import annotations

import math

import pytest

from checkers.metrics import (
    CountDistinct,
    Distinctness,
    Entropy,
    Histogram,
    MutualInformation,
    Size,
    Uniqueness,
    UniqueValueRatio,
    run_analysis,
)

SCHEMA = "a string, b int, c string"
# a: x, x, y, z, NULL, NULL  b: 1, 1, 2, NULL, 3, NULL  c: p, q, p, p, q, NULL
ROWS = [
    ("x", 1, "p"),
    ("x", 1, "q"),
    ("y", 2, "p"),
    ("z", None, "p"),
    (None, 3, "q"),
    (None, None, None),
]


@pytest.fixture(scope="module")
def data(spark):
    return spark.createDataFrame(ROWS, SCHEMA)


def test_single_column_counts_skip_null_keys(data) -> None:
    analyzers = [CountDistinct("a"), Distinctness("a"), Uniqueness("a"), UniqueValueRatio("a")]
    result = run_analysis(data, analyzers)
    # non-NULL a: x, x, y, z -> 4 rows, 3 distinct, 2 singletons
    assert [result.metric(x).value for x in analyzers] == [3.0, 3 / 4, 2 / 4, 2 / 3]


def test_multi_column_keys_keep_partial_nulls(data) -> None:
    analyzers = [Uniqueness(["a", "b"]), CountDistinct(["a", "b"]), Distinctness(["b", "a"])]
    result = run_analysis(data, analyzers)
    # keys (rows with any non-NULL): (x,1),(x,1),(y,2),(z,NULL),(NULL,3) -> 5 rows, 4 distinct
    assert result.metric(analyzers[0]).value == pytest.approx(3 / 5)
    assert result.metric(analyzers[1]).value == 4.0
    assert result.metric(analyzers[2]).value == pytest.approx(4 / 5)
    assert result.metric(analyzers[0]).instance == "a,b"


def test_where_filters_before_grouping(data) -> None:
    analyzers = [
        Uniqueness("a", where="c = 'p'"),
        Uniqueness("a"),
        CountDistinct("c", where="b > 1"),
    ]
    result = run_analysis(data, analyzers)
    assert result.metric(analyzers[0]).value == pytest.approx(1.0)  # x, y, z once each
    assert result.metric(analyzers[1]).value == pytest.approx(0.5)
    assert result.metric(analyzers[2]).value == 2.0  # b=2 -> p, b=3 -> q


def test_entropy_natural_log(data) -> None:
    result = run_analysis(data, [Entropy("c"), Entropy("a", where="b = 1")])
    p, q = 3 / 5, 2 / 5
    assert result.metric(Entropy("c")).value == pytest.approx(-(p * math.log(p) + q * math.log(q)))
    assert result.metric(Entropy("a", where="b = 1")).value == pytest.approx(0.0)


def test_mutual_information_over_pairs_with_both_values(data) -> None:
    result = run_analysis(data, [MutualInformation(["a", "c"])])
    # pairs with both set: (x,p),(x,q),(y,p),(z,p): n = 4
    joint = {("x", "p"): 1, ("x", "q"): 1, ("y", "p"): 1, ("z", "p"): 1}
    pa = {"x": 2, "y": 1, "z": 1}
    pc = {"p": 3, "q": 1}
    expected = sum(
        (c / 4) * math.log((c / 4) / ((pa[a] / 4) * (pc[k] / 4))) for (a, k), c in joint.items()
    )
    assert result.metric(MutualInformation(["a", "c"])).value == pytest.approx(expected)


def test_mutual_information_of_identical_columns_is_the_entropy(make_df) -> None:
    df = make_df([(1, 1), (1, 1), (2, 2), (3, 3)], "u int, v int")
    result = run_analysis(df, [MutualInformation(["u", "v"]), Entropy("u")])
    assert result.metric(MutualInformation(["u", "v"])).value == pytest.approx(
        result.metric(Entropy("u")).value
    )


def test_histogram_keeps_nulls_and_orders_bins(data) -> None:
    result = run_analysis(
        data, [Histogram("a"), Histogram("c", max_detail_bins=1), Histogram("a", where="b = 1")]
    )
    a = result.metric(Histogram("a")).value
    assert a["number_of_bins"] == 4
    assert list(a["values"]) == ["NullValue", "x", "y", "z"]  # count desc, then value
    assert a["values"]["x"] == {"absolute": 2, "ratio": 2 / 6}
    c = result.metric(Histogram("c", max_detail_bins=1)).value
    assert c["number_of_bins"] == 3 and c["values"] == {"p": {"absolute": 3, "ratio": 0.5}}
    filtered = result.metric(Histogram("a", where="b = 1")).value
    assert filtered["values"] == {"x": {"absolute": 2, "ratio": 1.0}}  # ratio over filtered rows


def test_empty_input_gives_errors_and_zero_count(make_df) -> None:
    df = make_df([], SCHEMA)
    analyzers = [
        Uniqueness("a"),
        Entropy("a"),
        CountDistinct("a"),
        Histogram("a"),
        MutualInformation(["a", "b"]),
    ]
    result = run_analysis(df, analyzers)
    assert result.metric(CountDistinct("a")).value == 0.0
    for analyzer in (Uniqueness("a"), Entropy("a"), Histogram("a"), MutualInformation(["a", "b"])):
        assert "Empty state" in result.metric(analyzer).error


@pytest.mark.connect  # Connect answers a filter's schema unanalysed (runner._filter_error)
def test_missing_column_and_bad_filter_are_isolated(data) -> None:
    analyzers = [Uniqueness("nope"), Uniqueness("a", where="nope = 1"), Uniqueness("a"), Size()]
    result = run_analysis(data, analyzers)
    assert "does not exist" in result.metric(Uniqueness("nope")).error
    assert "nope" in result.metric(Uniqueness("a", where="nope = 1")).error
    assert result.metric(Uniqueness("a")).value == pytest.approx(0.5)
    assert result.metric(Size()).value == 6.0


def test_map_columns_cannot_be_grouped(spark) -> None:
    df = spark.createDataFrame([({"k": 1},)], "m map<string,int>")
    assert "cannot be grouped" in run_analysis(df, [Uniqueness("m")]).metric(Uniqueness("m")).error


def test_definition_errors() -> None:
    with pytest.raises(ValueError):
        Entropy(["a", "b"])
    with pytest.raises(ValueError):
        MutualInformation(["a"])
    with pytest.raises(ValueError):
        Histogram("a", max_detail_bins=0)
    assert Uniqueness("a") == Uniqueness(["a"])  # a single name and a one-element list agree


def test_merged_tables_are_shuffled_by_key_and_then_added_up_once(spark, capsys) -> None:
    """Each frequency table holds a key once, so adding up counts before the shuffle reduces
    nothing: the merge shuffles the rows by key and aggregates after, and equal keys (0.0 and
    -0.0, NaN) still meet."""
    from checkers.metrics.frequencies import COUNT, FrequencyState, key_column

    schema = f"{key_column(0)} int, {key_column(1)} double, {COUNT} long"
    day = spark.createDataFrame([(1, 2.0, 3), (2, -0.0, 1), (3, math.nan, 1)], schema)
    year = spark.createDataFrame([(1, 2.0, 4), (2, 0.0, 1), (3, math.nan, 2), (4, 1.0, 1)], schema)
    merged = FrequencyState(("a", "b"), day).merge(FrequencyState(("a", "b"), year)).frequencies
    assert merged is not None
    merged.explain()  # before it runs: adaptive execution would print its final plan too
    plan = capsys.readouterr().out.splitlines()
    assert sorted((r[0], r[2]) for r in merged.collect()) == [(1, 7), (2, 2), (3, 3), (4, 1)]
    shuffles = [i for i, line in enumerate(plan) if "Exchange" in line]
    assert len(shuffles) == 1, plan
    assert any("HashAggregate" in line for line in plan[: shuffles[0]]), plan
    assert not any("HashAggregate" in line for line in plan[shuffles[0] :]), plan
