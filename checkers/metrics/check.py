"""`Check`: Deequ's constraint API in snake_case. Each method adds one constraint on one analyzer
(assertions are plain Python callables run on the computed metric); `.where(sql)` filters the
constraint added last. All checks of a `VerificationSuite` are computed in one engine run.

    Check(CheckLevel.ERROR, "flights").is_complete("carrier").is_unique("id")
        .has_approx_quantile("arr_delay", 0.5, lambda v: v < 30).where("origin = 'JFK'")
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from enum import StrEnum

from pyspark.sql import Column, Window
from pyspark.sql import functions as F

from checkers.metrics._analyzer import Analyzer
from checkers.metrics.anomaly import AnomalyStrategy
from checkers.metrics.constraints import MetricAssertion, MetricConstraint
from checkers.metrics.counts import Completeness, Compliance, PatternMatch, Patterns, Size
from checkers.metrics.datatype import DataType
from checkers.metrics.extremes import Maximum, MaxLength, Minimum, MinLength
from checkers.metrics.frequencies import (
    CountDistinct,
    Distinctness,
    Entropy,
    Histogram,
    MutualInformation,
    Uniqueness,
    UniqueValueRatio,
)
from checkers.metrics.moments import Correlation, Mean, StandardDeviation, Sum
from checkers.metrics.sketches import ApproxCountDistinct, ApproxQuantile


@dataclasses.dataclass(frozen=True)
class AnomalySpec:
    strategy: AnomalyStrategy
    exclude_failed: bool = True
    tags: dict[str, str] = dataclasses.field(default_factory=dict)


class CheckLevel(StrEnum):
    ERROR = "Error"
    WARNING = "Warning"


def is_one(value: float) -> bool:
    return value == 1.0


def _pick(key: str) -> Callable[[object], object]:
    """A value picker for one entry of a mapping-valued metric."""
    return lambda value: value[key]  # type: ignore[index]


def _quote(column: str) -> str:
    return "`" + column.replace("`", "``") + "`"


def _literal(value: object) -> str:
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return repr(value)


def _names(columns: str | Sequence[str]) -> tuple[str, ...]:
    return (columns,) if isinstance(columns, str) else tuple(columns)


def _unique_rows(columns: tuple[str, ...]) -> Callable[[], Column]:
    """TRUE for rows whose key occurs once (rows with an all-NULL key are not judged: TRUE)."""

    def build() -> Column:
        key = [F.col(_quote(c)) for c in columns]
        count = F.count(F.lit(1)).over(Window.partitionBy(*key))
        all_null = F.lit(True)
        for column in key:
            all_null = all_null & column.isNull()
        return all_null | (count == 1)

    return build


def _sql_rows(predicate: str) -> Callable[[], Column]:
    return lambda: F.coalesce(F.expr(predicate), F.lit(False))


def _value_rows(
    expression: Callable[[], Column], assertion: MetricAssertion
) -> Callable[[], Column]:
    """TRUE where `assertion(value)` holds for the row's value (NULL values are not judged)."""

    def build() -> Column:
        from pyspark.sql.types import BooleanType

        judge = F.udf(lambda v: True if v is None else bool(assertion(v)), BooleanType())  # type: ignore[arg-type]
        return judge(expression())

    return build


class Check:
    """A named group of constraints with a level: failing constraints make the check's status
    its level (ERROR or WARNING)."""

    def __init__(self, level: CheckLevel, description: str) -> None:
        self.level = CheckLevel(level)
        self.description = description
        self._constraints: list[MetricConstraint] = []

    @property
    def constraints(self) -> tuple[MetricConstraint, ...]:
        return tuple(self._constraints)

    def __repr__(self) -> str:
        return (
            f"Check({self.level.value}, {self.description!r}, {len(self._constraints)} constraints)"
        )

    # -- building ---------------------------------------------------------------------------
    def add_constraint(
        self,
        analyzer: Analyzer,
        assertion: MetricAssertion,
        name: str,
        *,
        hint: str = "",
        value_picker: Callable[[object], object] | None = None,
        row_condition: Callable[[], Column] | None = None,
    ) -> Check:
        self._constraints.append(
            MetricConstraint(analyzer, assertion, name, hint, value_picker, row_condition)
        )
        return self

    def where(self, condition: str) -> Check:
        """Filter the constraint added last: only rows where `condition` holds are analyzed
        (rows it excludes count as satisfying the constraint at row level)."""
        if not self._constraints:
            raise ValueError("where() filters the last constraint; add one first")
        last = self._constraints[-1]
        if not any(f.name == "where" for f in dataclasses.fields(last.analyzer)):  # type: ignore[arg-type]
            raise ValueError(f"{type(last.analyzer).__name__} constraints cannot be filtered")
        rows = last.row_condition

        def filtered_rows() -> Column:
            assert rows is not None
            return F.when(F.coalesce(F.expr(condition), F.lit(False)), rows()).otherwise(True)

        self._constraints[-1] = dataclasses.replace(
            last,
            analyzer=dataclasses.replace(last.analyzer, where=condition),  # type: ignore[type-var]
            description=f"{last.description} where {condition}",
            row_condition=filtered_rows if rows is not None else None,
        )
        return self

    # -- size and completeness ----------------------------------------------------------------
    def has_size(self, assertion: MetricAssertion, hint: str = "") -> Check:
        return self.add_constraint(Size(), assertion, "SizeConstraint", hint=hint)

    def is_complete(self, column: str, hint: str = "") -> Check:
        return self.has_completeness(column, is_one, hint)

    def has_completeness(self, column: str, assertion: MetricAssertion, hint: str = "") -> Check:
        return self.add_constraint(
            Completeness(column),
            assertion,
            f"CompletenessConstraint({column})",
            hint=hint,
            row_condition=lambda: F.col(_quote(column)).isNotNull(),
        )

    def are_complete(self, columns: Sequence[str], hint: str = "") -> Check:
        return self.have_completeness(columns, is_one, hint)

    def have_completeness(
        self, columns: Sequence[str], assertion: MetricAssertion, hint: str = ""
    ) -> Check:
        predicate = " AND ".join(f"{_quote(c)} IS NOT NULL" for c in columns)
        return self._compliance("Combined Completeness", predicate, columns, assertion, hint)

    def are_any_complete(self, columns: Sequence[str], hint: str = "") -> Check:
        return self.have_any_completeness(columns, is_one, hint)

    def have_any_completeness(
        self, columns: Sequence[str], assertion: MetricAssertion, hint: str = ""
    ) -> Check:
        predicate = " OR ".join(f"{_quote(c)} IS NOT NULL" for c in columns)
        return self._compliance("Any Completeness", predicate, columns, assertion, hint)

    # -- uniqueness family ----------------------------------------------------------------------
    def is_unique(self, column: str | Sequence[str], hint: str = "") -> Check:
        return self.has_uniqueness(column, is_one, hint)

    def is_primary_key(self, column: str, *columns: str, hint: str = "") -> Check:
        """Unique and complete. Unlike Deequ, a NULL in a key column fails the constraint."""
        names = (column, *columns)
        self.are_complete(names, hint)
        return self.has_uniqueness(names, is_one, hint)

    def has_uniqueness(
        self, columns: str | Sequence[str], assertion: MetricAssertion, hint: str = ""
    ) -> Check:
        names = _names(columns)
        return self.add_constraint(
            Uniqueness(names),
            assertion,
            f"UniquenessConstraint({', '.join(names)})",
            hint=hint,
            row_condition=_unique_rows(names),
        )

    def has_distinctness(
        self, columns: str | Sequence[str], assertion: MetricAssertion, hint: str = ""
    ) -> Check:
        names = _names(columns)
        return self.add_constraint(
            Distinctness(names), assertion, f"DistinctnessConstraint({', '.join(names)})", hint=hint
        )

    def has_unique_value_ratio(
        self, columns: str | Sequence[str], assertion: MetricAssertion, hint: str = ""
    ) -> Check:
        names = _names(columns)
        return self.add_constraint(
            UniqueValueRatio(names),
            assertion,
            f"UniqueValueRatioConstraint({', '.join(names)})",
            hint=hint,
            row_condition=_unique_rows(names),
        )

    def has_number_of_distinct_values(
        self, column: str, assertion: MetricAssertion, hint: str = ""
    ) -> Check:
        """Distinct values, NULL counted as one value (as in Deequ's histogram)."""
        return self.add_constraint(
            Histogram(column),
            assertion,
            f"HistogramBinConstraint({column})",
            hint=hint,
            value_picker=_pick("number_of_bins"),
        )

    def has_count_distinct(
        self, column: str | Sequence[str], assertion: MetricAssertion, hint: str = ""
    ) -> Check:
        names = _names(column)
        return self.add_constraint(
            CountDistinct(names),
            assertion,
            f"CountDistinctConstraint({', '.join(names)})",
            hint=hint,
        )

    def has_histogram_values(
        self,
        column: str,
        assertion: Callable[[Mapping[str, Mapping[str, float]]], object],
        hint: str = "",
    ) -> Check:
        """`assertion` gets {value: {"absolute": n, "ratio": share}} (NULL as "NullValue")."""
        return self.add_constraint(
            Histogram(column),
            assertion,  # type: ignore[arg-type]
            f"HistogramConstraint({column})",
            hint=hint,
            value_picker=_pick("values"),
        )

    def has_entropy(self, column: str, assertion: MetricAssertion, hint: str = "") -> Check:
        return self.add_constraint(
            Entropy((column,)), assertion, f"EntropyConstraint({column})", hint=hint
        )

    def has_mutual_information(
        self, column_a: str, column_b: str, assertion: MetricAssertion, hint: str = ""
    ) -> Check:
        return self.add_constraint(
            MutualInformation((column_a, column_b)),
            assertion,
            f"MutualInformationConstraint({column_a}, {column_b})",
            hint=hint,
        )

    # -- statistics -----------------------------------------------------------------------------
    def has_approx_quantile(
        self, column: str, quantile: float, assertion: MetricAssertion, hint: str = ""
    ) -> Check:
        return self.add_constraint(
            ApproxQuantile(column, quantile),
            assertion,
            f"ApproxQuantileConstraint({column}, {quantile})",
            hint=hint,
        )

    def has_approx_count_distinct(
        self, column: str, assertion: MetricAssertion, hint: str = ""
    ) -> Check:
        return self.add_constraint(
            ApproxCountDistinct(column),
            assertion,
            f"ApproxCountDistinctConstraint({column})",
            hint=hint,
        )

    def has_min(self, column: str, assertion: MetricAssertion, hint: str = "") -> Check:
        return self.add_constraint(
            Minimum(column),
            assertion,
            f"MinimumConstraint({column})",
            hint=hint,
            row_condition=_value_rows(lambda: F.col(_quote(column)), assertion),
        )

    def has_max(self, column: str, assertion: MetricAssertion, hint: str = "") -> Check:
        return self.add_constraint(
            Maximum(column),
            assertion,
            f"MaximumConstraint({column})",
            hint=hint,
            row_condition=_value_rows(lambda: F.col(_quote(column)), assertion),
        )

    def has_min_length(self, column: str, assertion: MetricAssertion, hint: str = "") -> Check:
        return self.add_constraint(
            MinLength(column),
            assertion,
            f"MinLengthConstraint({column})",
            hint=hint,
            row_condition=_value_rows(lambda: F.length(F.col(_quote(column))), assertion),
        )

    def has_max_length(self, column: str, assertion: MetricAssertion, hint: str = "") -> Check:
        return self.add_constraint(
            MaxLength(column),
            assertion,
            f"MaxLengthConstraint({column})",
            hint=hint,
            row_condition=_value_rows(lambda: F.length(F.col(_quote(column))), assertion),
        )

    def has_mean(self, column: str, assertion: MetricAssertion, hint: str = "") -> Check:
        return self.add_constraint(Mean(column), assertion, f"MeanConstraint({column})", hint=hint)

    def has_sum(self, column: str, assertion: MetricAssertion, hint: str = "") -> Check:
        return self.add_constraint(Sum(column), assertion, f"SumConstraint({column})", hint=hint)

    def has_standard_deviation(
        self, column: str, assertion: MetricAssertion, hint: str = ""
    ) -> Check:
        return self.add_constraint(
            StandardDeviation(column),
            assertion,
            f"StandardDeviationConstraint({column})",
            hint=hint,
        )

    def has_correlation(
        self, column_a: str, column_b: str, assertion: MetricAssertion, hint: str = ""
    ) -> Check:
        return self.add_constraint(
            Correlation(column_a, column_b),
            assertion,
            f"CorrelationConstraint({column_a}, {column_b})",
            hint=hint,
        )

    def has_data_type(
        self, column: str, data_type: str, assertion: MetricAssertion = is_one, hint: str = ""
    ) -> Check:
        """Share of non-NULL values of `data_type` ("Integral", "Fractional", "Boolean",
        "String", "Numeric" = Integral + Fractional), as in Deequ."""
        wanted = ("Integral", "Fractional") if data_type == "Numeric" else (data_type,)

        def share(value: object) -> float:
            counts = value["counts"]  # type: ignore[index]
            known = sum(n for t, n in counts.items() if t != "Unknown")
            return float(sum(counts.get(t, 0) for t in wanted)) / known if known else 0.0

        return self.add_constraint(
            DataType(column),
            assertion,
            f"DataTypeConstraint({column}, {data_type})",
            hint=hint,
            value_picker=share,
        )

    # -- compliance family ----------------------------------------------------------------------
    def _compliance(
        self,
        name: str,
        predicate: str,
        columns: Sequence[str],
        assertion: MetricAssertion,
        hint: str,
    ) -> Check:
        return self.add_constraint(
            Compliance(name, predicate, predicate_columns=tuple(columns)),
            assertion,
            f"ComplianceConstraint({name})",
            hint=hint,
            row_condition=_sql_rows(predicate),
        )

    def satisfies(
        self,
        predicate: str,
        name: str,
        assertion: MetricAssertion = is_one,
        columns: Sequence[str] = (),
        hint: str = "",
    ) -> Check:
        """Share of rows where the SQL `predicate` is TRUE (NULL counts as not compliant)."""
        return self._compliance(name, predicate, columns, assertion, hint)

    def is_non_negative(
        self, column: str, assertion: MetricAssertion = is_one, hint: str = ""
    ) -> Check:
        """NULL passes, as in Deequ."""
        predicate = f"COALESCE(CAST({_quote(column)} AS DOUBLE), 0.0) >= 0"
        return self._compliance(f"{column} is non-negative", predicate, [column], assertion, hint)

    def is_positive(
        self, column: str, assertion: MetricAssertion = is_one, hint: str = ""
    ) -> Check:
        """NULL passes, as in Deequ."""
        predicate = f"COALESCE(CAST({_quote(column)} AS DOUBLE), 1.0) > 0"
        return self._compliance(f"{column} is positive", predicate, [column], assertion, hint)

    def _compare(
        self, a: str, b: str, operator: str, words: str, assertion: MetricAssertion, hint: str
    ) -> Check:
        """NULL in either column is not compliant, as in Deequ."""
        return self._compliance(
            f"{a} {words} {b}", f"{_quote(a)} {operator} {_quote(b)}", [a, b], assertion, hint
        )

    def is_less_than(
        self, a: str, b: str, assertion: MetricAssertion = is_one, hint: str = ""
    ) -> Check:
        return self._compare(a, b, "<", "is less than", assertion, hint)

    def is_less_than_or_equal_to(
        self, a: str, b: str, assertion: MetricAssertion = is_one, hint: str = ""
    ) -> Check:
        return self._compare(a, b, "<=", "is less than or equal to", assertion, hint)

    def is_greater_than(
        self, a: str, b: str, assertion: MetricAssertion = is_one, hint: str = ""
    ) -> Check:
        return self._compare(a, b, ">", "is greater than", assertion, hint)

    def is_greater_than_or_equal_to(
        self, a: str, b: str, assertion: MetricAssertion = is_one, hint: str = ""
    ) -> Check:
        return self._compare(a, b, ">=", "is greater than or equal to", assertion, hint)

    def is_contained_in(
        self,
        column: str,
        allowed: Sequence[object],
        assertion: MetricAssertion = is_one,
        hint: str = "",
    ) -> Check:
        """Values among `allowed`; NULL passes, as in Deequ."""
        values = ", ".join(_literal(v) for v in allowed)
        predicate = f"{_quote(column)} IS NULL OR {_quote(column)} IN ({values})"
        return self._compliance(
            f"{column} contained in {values}", predicate, [column], assertion, hint
        )

    def is_in_range(
        self,
        column: str,
        lower: float,
        upper: float,
        *,
        include_lower: bool = True,
        include_upper: bool = True,
        assertion: MetricAssertion = is_one,
        hint: str = "",
    ) -> Check:
        """Values within bounds; NULL passes, as in Deequ."""
        low, high = (">=" if include_lower else ">"), ("<=" if include_upper else "<")
        q = _quote(column)
        predicate = f"{q} IS NULL OR ({q} {low} {lower!r} AND {q} {high} {upper!r})"
        return self._compliance(
            f"{column} between {lower} and {upper}", predicate, [column], assertion, hint
        )

    # -- history ----------------------------------------------------------------------------
    def has_no_anomalies(
        self,
        analyzer: Analyzer,
        strategy: AnomalyStrategy,
        *,
        exclude_failed: bool = True,
        tags: Mapping[str, str] | None = None,
        hint: str = "",
    ) -> Check:
        """The metric is not anomalous compared with its history in the metrics repository
        (`VerificationSuite.use_repository`). `exclude_failed` leaves out earlier runs that were
        flagged or failed; the constraint reports the bounds it used."""
        return self.add_constraint(
            analyzer,
            lambda _: True,
            f"AnomalyConstraint({analyzer!r}, {type(strategy).__name__})",
            hint=hint,
        )._with_anomaly(AnomalySpec(strategy, exclude_failed, dict(tags or {})))

    def _with_anomaly(self, spec: AnomalySpec) -> Check:
        self._constraints[-1] = dataclasses.replace(self._constraints[-1], anomaly=spec)
        return self

    # -- patterns -------------------------------------------------------------------------------
    def has_pattern(
        self,
        column: str,
        pattern: str,
        assertion: MetricAssertion = is_one,
        name: str = "",
        hint: str = "",
    ) -> Check:
        """Share of values matching the regular expression (NULL does not match)."""
        return self.add_constraint(
            PatternMatch(column, pattern),
            assertion,
            name or f"PatternMatchConstraint({column}, {pattern})",
            hint=hint,
            row_condition=lambda: F.coalesce(F.col(_quote(column)).rlike(pattern), F.lit(False)),
        )

    def contains_email(
        self, column: str, assertion: MetricAssertion = is_one, hint: str = ""
    ) -> Check:
        return self.has_pattern(
            column, Patterns.EMAIL, assertion, f"ContainsEmailConstraint({column})", hint
        )

    def contains_url(
        self, column: str, assertion: MetricAssertion = is_one, hint: str = ""
    ) -> Check:
        return self.has_pattern(
            column, Patterns.URL, assertion, f"ContainsURLConstraint({column})", hint
        )

    def contains_credit_card_number(
        self, column: str, assertion: MetricAssertion = is_one, hint: str = ""
    ) -> Check:
        return self.has_pattern(
            column, Patterns.CREDITCARD, assertion, f"ContainsCreditCardConstraint({column})", hint
        )

    def contains_social_security_number(
        self, column: str, assertion: MetricAssertion = is_one, hint: str = ""
    ) -> Check:
        return self.has_pattern(
            column,
            Patterns.SOCIAL_SECURITY_NUMBER_US,
            assertion,
            f"ContainsSSNConstraint({column})",
            hint,
        )
