"""Every constraint method on hand-computed data, with NULLs and `.where`, and the
VerificationSuite's result, exports and row-level results."""

from __future__ import annotations

import json
import math

import pytest

from checkers.metrics import Check, CheckLevel, CheckStatus, ConstraintStatus, VerificationSuite

# Deequ's checks, Python assertions (UDFs) included, over whichever session runs.
# (tests/connect_paths.py)
pytestmark = pytest.mark.connect

SCHEMA = (
    "id int, name string, email string, score double, amount int, start int, end int, "
    "priority string, code string"
)
ROWS = [
    (1, "ann", "ann@x.org", 10.0, 5, 1, 2, "hi", "1"),
    (2, "bob", "not-an-email", -1.0, 0, 2, 1, "lo", "2.5"),
    (3, None, None, None, None, 3, 5, "hi", "x"),
    (4, "dan", "dan@y.com", 7.5, 2, None, 4, "mid", None),
    (4, "eve", "eve@z.net", 3.0, 1, 5, 6, None, "true"),
]
SCORES = [10.0, -1.0, 7.5, 3.0]
MEAN = sum(SCORES) / 4
STD = math.sqrt(sum((s - MEAN) ** 2 for s in SCORES) / 4)
SAMPLE_VAR = sum((s - MEAN) ** 2 for s in SCORES) / 3
SKEW = math.sqrt(4) * sum((s - MEAN) ** 3 for s in SCORES) / (STD**2 * 4) ** 1.5
KURT = 4 * sum((s - MEAN) ** 4 for s in SCORES) / (STD**2 * 4) ** 2 - 3
ENTROPY = -(0.5 * math.log(0.5) + 2 * 0.25 * math.log(0.25))
PAIRS = [(1, 2), (2, 1), (3, 5), (5, 6)]


def _corr(pairs):
    xs, ys = zip(*pairs, strict=True)
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    cov = sum((x - mx) * (y - my) for x, y in pairs)
    return cov / math.sqrt(sum((x - mx) ** 2 for x in xs) * sum((y - my) ** 2 for y in ys))


def close(expected: float):
    return lambda v: abs(v - expected) < 1e-9


# (builder, expected status, expected value)
CASES = {
    "has_size": (lambda c: c.has_size(lambda n: n == 5), True, 5.0),
    "is_complete": (lambda c: c.is_complete("id"), True, 1.0),
    "is_complete_nulls": (lambda c: c.is_complete("name"), False, 0.8),
    "is_complete_where": (lambda c: c.is_complete("name").where("id < 3"), True, 1.0),
    "has_completeness": (lambda c: c.has_completeness("name", lambda v: v >= 0.8), True, 0.8),
    "are_complete": (lambda c: c.are_complete(["name", "email"]), False, 0.8),
    "are_any_complete": (lambda c: c.are_any_complete(["name", "score"]), False, 0.8),
    "is_unique": (lambda c: c.is_unique("id"), False, 0.6),
    "is_unique_where": (lambda c: c.is_unique("id").where("id < 4"), True, 1.0),
    # unique pairs (1.0, the last constraint) but a NULL name fails completeness (0.8)
    "is_primary_key": (lambda c: c.is_primary_key("id", "name"), False, 1.0),
    "has_uniqueness": (lambda c: c.has_uniqueness(["id", "name"], lambda v: v == 1), True, 1.0),
    "has_distinctness": (lambda c: c.has_distinctness("id", close(0.8)), True, 0.8),
    "has_unique_value_ratio": (lambda c: c.has_unique_value_ratio("id", close(0.75)), True, 0.75),
    "has_number_of_distinct_values": (
        lambda c: c.has_number_of_distinct_values("priority", lambda n: n == 4),
        True,
        4,
    ),
    "has_count_distinct": (lambda c: c.has_count_distinct("priority", lambda n: n == 3), True, 3.0),
    "has_histogram_values": (
        lambda c: c.has_histogram_values("priority", lambda h: h["hi"]["ratio"] == 0.4),
        True,
        None,
    ),
    "has_entropy": (lambda c: c.has_entropy("priority", close(ENTROPY)), True, ENTROPY),
    "has_mutual_information": (
        lambda c: c.has_mutual_information("id", "priority", lambda v: v > 0),
        True,
        None,
    ),
    "has_approx_quantile": (
        lambda c: c.has_approx_quantile("score", 0.5, lambda v: v in (3.0, 7.5)),
        True,
        None,
    ),
    "has_approx_count_distinct": (
        lambda c: c.has_approx_count_distinct("name", lambda n: round(n) == 4),
        True,
        None,
    ),
    "has_min": (lambda c: c.has_min("score", lambda v: v >= 0), False, -1.0),
    "has_min_where_empty": (
        lambda c: c.has_min("score", lambda v: v > 0).where("id > 100"),
        True,
        None,
    ),
    "has_max": (lambda c: c.has_max("score", lambda v: v == 10), True, 10.0),
    "has_min_length": (lambda c: c.has_min_length("name", lambda v: v == 3), True, 3.0),
    "has_max_length": (lambda c: c.has_max_length("email", lambda v: v <= 10), False, 12.0),
    "has_mean": (lambda c: c.has_mean("score", close(MEAN)), True, MEAN),
    "has_sum": (lambda c: c.has_sum("amount", lambda v: v == 8), True, 8.0),
    "has_standard_deviation": (lambda c: c.has_standard_deviation("score", close(STD)), True, STD),
    "has_standard_deviation_sample": (
        lambda c: c.has_standard_deviation("score", close(math.sqrt(SAMPLE_VAR)), sample=True),
        True,
        math.sqrt(SAMPLE_VAR),
    ),
    "has_variance": (lambda c: c.has_variance("score", close(STD**2)), True, STD**2),
    "has_variance_sample": (
        lambda c: c.has_variance("score", lambda v: v < 20, sample=True),
        False,
        SAMPLE_VAR,
    ),
    "has_skewness": (lambda c: c.has_skewness("score", lambda v: v < 0), True, SKEW),
    "has_kurtosis": (lambda c: c.has_kurtosis("score", close(KURT)), True, KURT),
    "has_correlation": (
        lambda c: c.has_correlation("start", "end", close(_corr(PAIRS))),
        True,
        _corr(PAIRS),
    ),
    "has_data_type": (lambda c: c.has_data_type("code", "Numeric", lambda v: v == 0.5), True, 0.5),
    "has_data_type_string": (lambda c: c.has_data_type("code", "String"), False, 0.25),
    "satisfies": (lambda c: c.satisfies("amount > 0", "positive amount", close(0.6)), True, 0.6),
    "is_non_negative": (lambda c: c.is_non_negative("score"), False, 0.8),
    "is_positive": (lambda c: c.is_positive("amount"), False, 0.8),
    "is_less_than": (lambda c: c.is_less_than("start", "end"), False, 0.6),
    "is_less_than_or_equal_to": (
        lambda c: c.is_less_than_or_equal_to("start", "end", close(0.6)),
        True,
        0.6,
    ),
    "is_greater_than": (lambda c: c.is_greater_than("end", "start", close(0.6)), True, 0.6),
    "is_greater_than_or_equal_to": (
        lambda c: c.is_greater_than_or_equal_to("end", "start"),
        False,
        0.6,
    ),
    "is_contained_in": (lambda c: c.is_contained_in("priority", ["hi", "lo"]), False, 0.8),
    "is_contained_in_where": (
        lambda c: c.is_contained_in("priority", ["hi", "lo"]).where("id < 4"),
        True,
        1.0,
    ),
    "is_in_range": (lambda c: c.is_in_range("score", 0, 10), False, 0.8),
    "is_in_range_open": (
        lambda c: c.is_in_range("score", -5, 10, include_upper=False, assertion=close(0.8)),
        True,
        0.8,
    ),
    "has_pattern": (lambda c: c.has_pattern("name", "^[a-d]", close(0.6)), True, 0.6),
    "contains_email": (lambda c: c.contains_email("email"), False, 0.6),
    "contains_url": (lambda c: c.contains_url("email", lambda v: v == 0), True, 0.0),
    "contains_credit_card_number": (
        lambda c: c.contains_credit_card_number("email", lambda v: v == 0),
        True,
        0.0,
    ),
    "contains_social_security_number": (
        lambda c: c.contains_social_security_number("email", lambda v: v == 0),
        True,
        0.0,
    ),
}


@pytest.fixture(scope="module")
def people(spark):
    return spark.createDataFrame(ROWS, SCHEMA)


@pytest.fixture(scope="module")
def verified(people):
    checks = {name: build(Check(CheckLevel.ERROR, name)) for name, (build, _, _) in CASES.items()}
    return VerificationSuite(people).add_checks(list(checks.values())).run()


@pytest.mark.parametrize("name", sorted(CASES))
def test_constraint(verified, name):
    _, holds, expected = CASES[name]
    result = next(r for r in verified.check_results if r.check.description == name)
    statuses = [c.status for c in result.constraint_results]
    assert (ConstraintStatus.FAILURE not in statuses) is holds, [
        (c.constraint.name, c.value, c.message) for c in result.constraint_results
    ]
    if expected is not None:
        assert result.constraint_results[-1].value == pytest.approx(expected)


def test_all_checks_ran_in_few_passes(verified):
    assert verified.status is CheckStatus.ERROR
    assert verified.spark_actions <= 4  # scan, sketches, one grouping query, histogram detail


def test_missing_column_and_warning_level(people):
    check = Check(CheckLevel.WARNING, "warn").is_complete("nope").has_size(lambda n: n > 0)
    result = VerificationSuite(people).add_check(check).run()
    assert result.status is CheckStatus.WARNING
    first, second = result.check_results[0].constraint_results
    assert first.status is ConstraintStatus.FAILURE and "'nope' does not exist" in first.message
    assert second.status is ConstraintStatus.SUCCESS


def test_exports(spark, verified):
    records = verified.records()
    assert len(records) == sum(len(r.constraint_results) for r in verified.check_results)
    assert json.loads(verified.to_json())["status"] == "Error"
    frame = verified.to_pandas()
    assert list(frame.columns)[:6] == [
        "check",
        "check_level",
        "check_status",
        "constraint",
        "constraint_status",
        "constraint_message",
    ]
    assert verified.to_spark(spark).count() == len(records)
    assert {"entity", "instance", "name", "value"} <= set(verified.success_metrics()[0])
    assert "is_unique" in verified.report() and "does not meet" in verified.report()


def test_row_level_results(people):
    check = (
        Check(CheckLevel.ERROR, "rows")
        .is_complete("name")
        .is_unique("id")
        .is_non_negative("score")
        .is_contained_in("priority", ["hi"])
        .where("id = 1")
    )
    sized = Check(CheckLevel.ERROR, "no row meaning").has_size(lambda n: n > 0)
    result = VerificationSuite(people).add_check(check).add_check(sized).run()
    rows = result.row_level_results(people).orderBy("name").collect()
    assert "no row meaning" not in rows[0].asDict()
    # NULL name first: fails completeness; ann ok; bob negative score; dan, eve duplicate id
    assert [r["rows"] for r in rows] == [False, True, False, False, False]


def test_where_needs_a_constraint_and_a_filterable_analyzer():
    with pytest.raises(ValueError, match="add one first"):
        Check(CheckLevel.ERROR, "empty").where("x > 1")


FILTERABLE = sorted(n for n in CASES if not n.endswith(("_where", "_empty")))


@pytest.fixture(scope="module")
def filtered(people):
    """Every case again, its last constraint filtered twice: by a condition every row meets,
    and by one no row meets."""
    checks = []
    for name in FILTERABLE:
        build = CASES[name][0]
        checks.append(build(Check(CheckLevel.ERROR, f"all {name}")).where("id > 0"))
        checks.append(build(Check(CheckLevel.ERROR, f"none {name}")).where("id > 100"))
    result = VerificationSuite(people).add_checks(checks).run()
    return {r.check.description: r.constraint_results[-1] for r in result.check_results}


@pytest.mark.parametrize("name", FILTERABLE)
def test_every_constraint_honours_where(verified, filtered, name):
    unfiltered = next(r for r in verified.check_results if r.check.description == name)
    everything = filtered[f"all {name}"]
    assert everything.value == unfiltered.constraint_results[-1].value
    assert everything.status is unfiltered.constraint_results[-1].status
    nothing = filtered[f"none {name}"]
    if name in ("has_size", "has_count_distinct", "has_approx_count_distinct"):
        assert nothing.value == 0  # counts of no rows are defined: zero
    else:  # no rows: nothing to violate
        assert nothing.status is ConstraintStatus.SUCCESS, nothing.message
