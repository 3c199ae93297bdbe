"""Constraint suggestions from column profiles, with Deequ's rules (and its known bugs fixed),
as ready-to-paste Python for our `Check` API; optionally evaluated on a held-out split.

Differences from Deequ, on purpose: completeness and category-coverage bounds use the Wilson
score interval (Deequ's default Wald interval misbehaves near 0 and 1); `NonNegativeNumbers`
suggests `is_non_negative` and means it (Deequ's code string says so while its constraint counts
NULL as a violation); `HasMin`/`HasMax` suggest bounds (>= / <=) instead of exact equality; there
is no `HasMean` (Deequ's used the maximum) nor `HasStandardDeviation` (an exact float, true on the
profiled rows only); `HasMinLength` reads the length of non-NULL values, as the constraint it
suggests does (Deequ's profile reads NULL as "", so it suggests `>= 0`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from pyspark.sql import DataFrame

from checkers.metrics.check import Check, CheckLevel
from checkers.metrics.constraints import ConstraintStatus
from checkers.metrics.profiles import ColumnProfile, Profiles, profile
from checkers.metrics.verification import VerificationSuite

NULL_VALUE = "NullValue"
Z_95 = 1.959963984540054


def wilson_lower(share: float, n: int, z: float = Z_95) -> float:
    """Lower bound of the Wilson score interval, rounded down to 2 decimals."""
    if n == 0:
        return 0.0
    centre = share + z * z / (2 * n)
    spread = z * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n))
    return math.floor((centre - spread) / (1 + z * z / n) * 100) / 100


@dataclass(frozen=True)
class Suggestion:
    rule: str
    column: str
    description: str
    code: str  # appended to a Check: `Check(CheckLevel.ERROR, "...")<code>`
    current_value: object = None

    def apply(self, check: Check) -> Check:
        """Add the suggested constraint to `check`, by running exactly the suggested code."""
        return eval(f"check{self.code}", {"check": check})


Rule = Callable[[ColumnProfile, int], list[Suggestion]]


def _categories(p: ColumnProfile) -> list[object]:
    integral = p.spark_type in ("tinyint", "smallint", "int", "bigint")
    keys = [k for k in (p.histogram or {}) if k != NULL_VALUE]
    return list(sorted(int(k) for k in keys) if integral else sorted(keys))


def complete_if_complete(p: ColumnProfile, n: int) -> list[Suggestion]:
    if p.completeness != 1.0:
        return []
    return [
        Suggestion(
            "CompleteIfComplete",
            p.column,
            f"'{p.column}' is not null",
            f".is_complete({p.column!r})",
            1.0,
        )
    ]


def retain_completeness(p: ColumnProfile, n: int) -> list[Suggestion]:
    if not 0.2 < p.completeness < 1.0:
        return []
    bound = wilson_lower(p.completeness, n)
    return [
        Suggestion(
            "RetainCompleteness",
            p.column,
            f"'{p.column}' has at least {bound:.0%} non-null values",
            f".has_completeness({p.column!r}, lambda v: v >= {bound})",
            p.completeness,
        )
    ]


def retain_type(p: ColumnProfile, n: int) -> list[Suggestion]:
    if p.inferred_type not in ("Integral", "Fractional", "Boolean"):
        return []
    return [
        Suggestion(
            "RetainType",
            p.column,
            f"'{p.column}' holds {p.inferred_type} values",
            f".has_data_type({p.column!r}, {p.inferred_type!r})",
            p.inferred_type,
        )
    ]


def _categorical(p: ColumnProfile) -> bool:
    return p.histogram is not None and (
        p.inferred_type == "String"
        or p.spark_type in ("tinyint", "smallint", "int", "bigint", "string", "boolean")
    )


def categorical_range(p: ColumnProfile, n: int) -> list[Suggestion]:
    if not _categorical(p):
        return []
    counts = {k: v for k, v in p.histogram.items() if k != NULL_VALUE}  # type: ignore[union-attr]
    if not counts or sum(1 for v in counts.values() if v == 1) / len(counts) > 0.1:
        return []
    values = _categories(p)
    return [
        Suggestion(
            "CategoricalRange",
            p.column,
            f"'{p.column}' has values in {values}",
            f".is_contained_in({p.column!r}, {values!r})",
            values,
        )
    ]


def fractional_categorical_range(
    p: ColumnProfile, n: int, coverage: float = 0.9
) -> list[Suggestion]:
    if not _categorical(p):
        return []
    counts = {k: v for k, v in p.histogram.items() if k != NULL_VALUE}  # type: ignore[union-attr]
    total = sum(p.histogram.values())  # type: ignore[union-attr]
    if not counts or sum(1 for v in counts.values() if v == 1) / len(counts) > 0.4:
        return []
    top, covered = [], 0
    for key, count in sorted(counts.items(), key=lambda kv: -kv[1]):
        top.append(key)
        covered += count
        if covered / total >= coverage:
            break
    share = covered / total
    if share >= 1.0 or len(top) == len(counts):
        return []
    integral = p.spark_type in ("tinyint", "smallint", "int", "bigint")
    values = sorted(int(k) for k in top) if integral else sorted(top)
    bound = wilson_lower(share, n)
    return [
        Suggestion(
            "FractionalCategoricalRange",
            p.column,
            f"'{p.column}' has values in {values} for at least {bound:.0%} of rows",
            f".is_contained_in({p.column!r}, {values!r}, lambda v: v >= {bound})",
            share,
        )
    ]


def non_negative_numbers(p: ColumnProfile, n: int) -> list[Suggestion]:
    if p.minimum is None or p.minimum < 0:
        return []
    return [
        Suggestion(
            "NonNegativeNumbers",
            p.column,
            f"'{p.column}' has no negative values",
            f".is_non_negative({p.column!r})",
            p.minimum,
        )
    ]


def unique_if_approximately_unique(p: ColumnProfile, n: int) -> list[Suggestion]:
    if n == 0 or p.completeness != 1.0 or abs(1 - p.approx_distinct / n) > 0.08:
        return []
    return [
        Suggestion(
            "UniqueIfApproximatelyUnique",
            p.column,
            f"'{p.column}' is unique",
            f".is_unique({p.column!r})",
            p.approx_distinct,
        )
    ]


def _bound_rule(rule: str, attribute: str, method: str, operator: str, words: str) -> Rule:
    """A rule suggesting `<method>(column, lambda v: v <operator> observed)`."""

    def suggest_bound(p: ColumnProfile, n: int) -> list[Suggestion]:
        observed = getattr(p, attribute)
        if observed is None:
            return []
        code = f".{method}({p.column!r}, lambda v: v {operator} {observed!r})"
        return [Suggestion(rule, p.column, f"'{p.column}' {words} {observed:g}", code, observed)]

    suggest_bound.__name__ = method
    return suggest_bound


has_min = _bound_rule("HasMin", "minimum", "has_min", ">=", "is at least")
has_max = _bound_rule("HasMax", "maximum", "has_max", "<=", "is at most")
has_min_length = _bound_rule(
    "HasMinLength", "min_length", "has_min_length", ">=", "is at least this long:"
)
has_max_length = _bound_rule(
    "HasMaxLength", "max_length", "has_max_length", "<=", "is at most this long:"
)


DEFAULT_RULES: tuple[Rule, ...] = (
    complete_if_complete,
    retain_completeness,
    retain_type,
    categorical_range,
    fractional_categorical_range,
    non_negative_numbers,
)
EXTENDED_RULES: tuple[Rule, ...] = (
    *DEFAULT_RULES,
    unique_if_approximately_unique,
    has_min,
    has_max,
    has_min_length,
    has_max_length,
)


@dataclass
class SuggestionResult:
    profiles: Profiles
    suggestions: list[Suggestion]
    #: With a train/test split: each suggestion's metric value and status on the held-out rows,
    #: in the order of `suggestions`.
    evaluation: list[tuple[object, ConstraintStatus]] = field(default_factory=list)

    def code(self, description: str = "suggested") -> str:
        """Ready-to-paste Python: one Check with every suggested constraint."""
        lines = [f"Check(CheckLevel.ERROR, {description!r})"]
        lines += [f"    {s.code}  # {s.rule}" for s in self.suggestions]
        return "(\n" + "\n".join(lines) + "\n)"

    def check(self, description: str = "suggested") -> Check:
        check = Check(CheckLevel.ERROR, description)
        for suggestion in self.suggestions:
            suggestion.apply(check)
        return check


def evaluate(
    suggestions: Sequence[Suggestion], data: DataFrame
) -> list[tuple[object, ConstraintStatus]]:
    """Each suggestion's value and status on `data`, in order (one engine run for all)."""
    checks = [s.apply(Check(CheckLevel.ERROR, f"{i}")) for i, s in enumerate(suggestions)]
    result = VerificationSuite(data).add_checks(checks).run()
    return [
        (r.constraint_results[-1].value, r.constraint_results[-1].status)
        for r in result.check_results
    ]


def suggest(
    df: DataFrame,
    *,
    rules: Sequence[Rule] = DEFAULT_RULES,
    columns: list[str] | None = None,
    test_fraction: float | None = None,
    seed: int = 42,
) -> SuggestionResult:
    """Suggestions for `df`'s columns. With `test_fraction`, profile on the rest and report each
    suggestion's coverage on the held-out `test_fraction` of the rows."""
    train, test = df, None
    if test_fraction is not None:
        if not 0 < test_fraction < 1:
            raise ValueError("test_fraction must be within (0, 1)")
        train, test = df.randomSplit([1 - test_fraction, test_fraction], seed)
    profiles = profile(train, columns=columns)
    suggestions = [
        s
        for p in profiles.columns.values()
        for rule in rules
        for s in rule(p, profiles.num_records)
    ]
    result = SuggestionResult(profiles, suggestions)
    if test is not None and suggestions:
        result.evaluation = evaluate(suggestions, test)
    return result
