"""`Check`: Deequ's constraint API in snake_case. Each method adds one constraint on one analyzer
(assertions are plain Python callables run on the computed metric); `.where(sql)` filters the
constraint added last. All checks of a `VerificationSuite` are computed in one engine run.

    Check(CheckLevel.ERROR, "flights").is_complete("carrier").is_unique("id")
        .has_approx_quantile("arr_delay", 0.5, lambda v: v < 30).where("origin = 'JFK'")
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Self

from pyspark.sql import Column
from pyspark.sql import functions as F

from checkers.metrics._analyzer import Analyzer
from checkers.metrics._check_compliance import ComplianceConstraints
from checkers.metrics._check_core import (
    AnomalySpec,
    CheckLevel,
    _names,
    _pick,
    _quote,
    _unique_rows,
    _value_rows,
    is_one,
)
from checkers.metrics.anomaly import AnomalyStrategy
from checkers.metrics.constraints import MetricAssertion
from checkers.metrics.counts import Completeness, Size, ZerosCount
from checkers.metrics.datatype import DataType
from checkers.metrics.exact_quantile import ExactQuantile
from checkers.metrics.extremes import Maximum, MaxLength, Minimum, MinLength, NullBehavior
from checkers.metrics.frequencies import (
    CountDistinct,
    Distinctness,
    DuplicateRowCount,
    Entropy,
    MutualInformation,
    Uniqueness,
    UniqueValueRatio,
)
from checkers.metrics.higher_moments import Kurtosis, Skewness
from checkers.metrics.histogram import Histogram
from checkers.metrics.moments import Correlation, Mean, StandardDeviation, Sum, Variance
from checkers.metrics.partition_drift import DEFAULT_WINDOW, KsDrift
from checkers.metrics.predictability import Predictability
from checkers.metrics.ratio_of_sums import RatioOfSums
from checkers.metrics.sensitivity import sensitivity_problem
from checkers.metrics.sketches import ApproxCountDistinct, ApproxQuantile, InterquartileRange
from checkers.metrics.standalone import ColumnCount, CustomSql

__all__ = ["AnomalySpec", "Check", "CheckLevel", "is_one"]

#: the types `has_data_type` takes (Deequ's ConstrainableDataTypes)
DATA_TYPES = ("Null", "Fractional", "Integral", "Boolean", "String", "Numeric")


def _length_rows(
    column: str, assertion: MetricAssertion, null_behavior: NullBehavior
) -> Callable[[], Column]:
    """Row-level length check with Deequ's NULL outcomes per `NullBehavior`."""
    length = lambda: F.length(F.col(_quote(column)))  # noqa: E731
    if null_behavior is NullBehavior.EMPTY_STRING:
        return _value_rows(lambda: F.coalesce(length(), F.lit(0)), assertion)
    judged = _value_rows(length, assertion)
    if null_behavior is NullBehavior.FAIL:
        return lambda: F.when(F.col(_quote(column)).isNull(), F.lit(False)).otherwise(judged())
    return judged


class Check(ComplianceConstraints):
    """A named group of constraints with a level: failing constraints make the check's status
    its level (ERROR or WARNING)."""

    # -- size and completeness ----------------------------------------------------------------
    def has_size(self, assertion: MetricAssertion, hint: str = "") -> Self:
        return self.add_constraint(Size(), assertion, "SizeConstraint", hint=hint)

    def is_complete(self, column: str, hint: str = "") -> Self:
        return self.has_completeness(column, is_one, hint)

    def has_completeness(self, column: str, assertion: MetricAssertion, hint: str = "") -> Self:
        return self._constrain(
            Completeness(column),
            assertion,
            hint=hint,
            row_condition=lambda: F.col(_quote(column)).isNotNull(),
        )

    def are_complete(self, columns: Sequence[str], hint: str = "") -> Self:
        return self.have_completeness(columns, is_one, hint)

    def have_completeness(
        self, columns: Sequence[str], assertion: MetricAssertion, hint: str = ""
    ) -> Self:
        predicate = " AND ".join(f"{_quote(c)} IS NOT NULL" for c in columns)
        return self._compliance("Combined Completeness", predicate, columns, assertion, hint)

    def are_any_complete(self, columns: Sequence[str], hint: str = "") -> Self:
        return self.have_any_completeness(columns, is_one, hint)

    def have_any_completeness(
        self, columns: Sequence[str], assertion: MetricAssertion, hint: str = ""
    ) -> Self:
        predicate = " OR ".join(f"{_quote(c)} IS NOT NULL" for c in columns)
        return self._compliance("Any Completeness", predicate, columns, assertion, hint)

    # -- uniqueness family ----------------------------------------------------------------------
    def is_unique(self, column: str | Sequence[str], hint: str = "") -> Self:
        return self.has_uniqueness(column, is_one, hint)

    def is_primary_key(self, column: str, *columns: str, hint: str = "") -> Self:
        """Unique and complete. Unlike Deequ, a NULL in a key column fails the constraint."""
        names = (column, *columns)
        self.are_complete(names, hint)
        return self.has_uniqueness(names, is_one, hint)

    def has_uniqueness(
        self, columns: str | Sequence[str], assertion: MetricAssertion, hint: str = ""
    ) -> Self:
        names = _names(columns)
        return self._constrain(
            Uniqueness(names), assertion, hint=hint, row_condition=_unique_rows(names)
        )

    def has_distinctness(
        self, columns: str | Sequence[str], assertion: MetricAssertion, hint: str = ""
    ) -> Self:
        names = _names(columns)
        return self.add_constraint(
            Distinctness(names), assertion, f"DistinctnessConstraint({', '.join(names)})", hint=hint
        )

    def has_unique_value_ratio(
        self, columns: str | Sequence[str], assertion: MetricAssertion, hint: str = ""
    ) -> Self:
        names = _names(columns)
        return self._constrain(
            UniqueValueRatio(names), assertion, hint=hint, row_condition=_unique_rows(names)
        )

    def has_number_of_distinct_values(
        self, column: str, assertion: MetricAssertion, hint: str = ""
    ) -> Self:
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
    ) -> Self:
        names = _names(column)
        return self._constrain(CountDistinct(names), assertion, hint=hint)

    def has_histogram_values(
        self,
        column: str,
        assertion: Callable[[Mapping[str, Mapping[str, float]]], object],
        hint: str = "",
        *,
        bins: Sequence[float] | None = None,
    ) -> Self:
        """`assertion` gets {value: {"absolute": n, "ratio": share}} (NULL as "NullValue"); with
        `bins` (edges), {"[a, b)": ...} per bin instead (see `Histogram`)."""
        return self.add_constraint(
            Histogram(column, bins=None if bins is None else tuple(bins)),
            assertion,  # type: ignore[arg-type]
            f"HistogramConstraint({column})",
            hint=hint,
            value_picker=_pick("values"),
        )

    def has_entropy(self, column: str, assertion: MetricAssertion, hint: str = "") -> Self:
        return self.add_constraint(
            Entropy((column,)), assertion, f"EntropyConstraint({column})", hint=hint
        )

    def has_mutual_information(
        self, column_a: str, column_b: str, assertion: MetricAssertion, hint: str = ""
    ) -> Self:
        return self._constrain(MutualInformation((column_a, column_b)), assertion, hint=hint)

    # -- statistics -----------------------------------------------------------------------------
    def has_approx_quantile(
        self, column: str, quantile: float, assertion: MetricAssertion, hint: str = ""
    ) -> Self:
        return self.add_constraint(
            ApproxQuantile(column, quantile),
            assertion,
            f"ApproxQuantileConstraint({column}, {quantile})",
            hint=hint,
        )

    def has_no_drift(
        self,
        column: str,
        *,
        ks_max: float,
        window: int = DEFAULT_WINDOW,
        hint: str = "",
    ) -> Self:
        """The newest partition's distribution of `column` within `ks_max` (robust KS distance)
        of the `window` partitions before it; for incremental checks, from their stored states."""
        return self.add_constraint(
            KsDrift(column, window),
            lambda distance: distance <= ks_max,
            f"NoDriftConstraint({column}, ks <= {ks_max}, window {window})",
            hint=hint,
        )

    def has_exact_quantile(
        self, column: str, quantile: float, assertion: MetricAssertion, hint: str = ""
    ) -> Self:
        return self.add_constraint(
            ExactQuantile(column, quantile),
            assertion,
            f"ExactQuantileConstraint({column}, {quantile})",
            hint=hint,
        )

    def has_interquartile_range(
        self, column: str, assertion: MetricAssertion, hint: str = ""
    ) -> Self:
        return self._constrain(InterquartileRange(column), assertion, hint=hint)

    def has_approx_count_distinct(
        self, column: str, assertion: MetricAssertion, hint: str = ""
    ) -> Self:
        return self._constrain(ApproxCountDistinct(column), assertion, hint=hint)

    def has_min(self, column: str, assertion: MetricAssertion, hint: str = "") -> Self:
        return self._constrain(
            Minimum(column),
            assertion,
            hint=hint,
            row_condition=_value_rows(lambda: F.col(_quote(column)), assertion),
        )

    def has_max(self, column: str, assertion: MetricAssertion, hint: str = "") -> Self:
        return self._constrain(
            Maximum(column),
            assertion,
            hint=hint,
            row_condition=_value_rows(lambda: F.col(_quote(column)), assertion),
        )

    def has_min_length(
        self,
        column: str,
        assertion: MetricAssertion,
        hint: str = "",
        *,
        null_behavior: NullBehavior = NullBehavior.IGNORE,
    ) -> Self:
        """Shortest length; NULLs follow `null_behavior` in the metric and at row level alike
        (IGNORE: not judged, EMPTY_STRING: judged as length 0, FAIL: the row fails)."""
        return self._constrain(
            MinLength(column, null_behavior=null_behavior),
            assertion,
            hint=hint,
            row_condition=_length_rows(column, assertion, null_behavior),
        )

    def has_max_length(
        self,
        column: str,
        assertion: MetricAssertion,
        hint: str = "",
        *,
        null_behavior: NullBehavior = NullBehavior.IGNORE,
    ) -> Self:
        """Longest length; NULLs follow `null_behavior` as in `has_min_length`."""
        return self._constrain(
            MaxLength(column, null_behavior=null_behavior),
            assertion,
            hint=hint,
            row_condition=_length_rows(column, assertion, null_behavior),
        )

    def has_mean(self, column: str, assertion: MetricAssertion, hint: str = "") -> Self:
        return self._constrain(Mean(column), assertion, hint=hint)

    def has_sum(self, column: str, assertion: MetricAssertion, hint: str = "") -> Self:
        return self._constrain(Sum(column), assertion, hint=hint)

    def has_standard_deviation(
        self, column: str, assertion: MetricAssertion, hint: str = "", *, sample: bool = False
    ) -> Self:
        """Population standard deviation (Deequ's); `sample=True` divides by n - 1."""
        return self._constrain(StandardDeviation(column, sample=sample), assertion, hint=hint)

    def has_variance(
        self, column: str, assertion: MetricAssertion, hint: str = "", *, sample: bool = False
    ) -> Self:
        """Population variance (Deequ's); `sample=True` divides by n - 1."""
        return self._constrain(Variance(column, sample=sample), assertion, hint=hint)

    def has_skewness(self, column: str, assertion: MetricAssertion, hint: str = "") -> Self:
        return self._constrain(Skewness(column), assertion, hint=hint)

    def has_kurtosis(self, column: str, assertion: MetricAssertion, hint: str = "") -> Self:
        """Population excess kurtosis (0 for a normal distribution), as in Deequ."""
        return self._constrain(Kurtosis(column), assertion, hint=hint)

    def has_correlation(
        self, column_a: str, column_b: str, assertion: MetricAssertion, hint: str = ""
    ) -> Self:
        return self._constrain(Correlation(column_a, column_b), assertion, hint=hint)

    def has_data_type(
        self, column: str, data_type: str, assertion: MetricAssertion = is_one, hint: str = ""
    ) -> Self:
        """Share of non-NULL values of `data_type` ("Integral", "Fractional", "Boolean",
        "String", "Numeric" = Integral + Fractional), or with "Null" the share of NULLs among
        all values, as in Deequ's `hasDataType`. Zero values of the type give 0.0."""
        if data_type not in DATA_TYPES:
            raise ValueError(f"unknown data type {data_type!r}; use one of {', '.join(DATA_TYPES)}")
        wanted = ("Integral", "Fractional") if data_type == "Numeric" else (data_type,)

        def share(value: object) -> float:
            counts = value["counts"]  # type: ignore[index]
            if data_type == "Null":
                return value["ratios"]["Unknown"]  # type: ignore[index]
            known = sum(n for t, n in counts.items() if t != "Unknown")
            return float(sum(counts.get(t, 0) for t in wanted)) / known if known else 0.0

        return self.add_constraint(
            DataType(column),
            assertion,
            f"DataTypeConstraint({column}, {data_type})",
            hint=hint,
            value_picker=share,
        )

    # -- counts, sums and SQL (Deequ 2.x) -------------------------------------------------------
    def has_column_count(self, assertion: MetricAssertion, hint: str = "") -> Self:
        """The number of columns (from the schema, no Spark job); it cannot be filtered."""
        return self.add_constraint(ColumnCount(), assertion, "ColumnCountConstraint", hint=hint)

    def has_zeros_count(self, column: str, assertion: MetricAssertion, hint: str = "") -> Self:
        """The number of values equal to zero in a numeric column."""
        return self._constrain(ZerosCount(column), assertion, hint=hint)

    def has_ratio_of_sums(
        self, numerator: str, denominator: str, assertion: MetricAssertion, hint: str = ""
    ) -> Self:
        """`sum(numerator) / sum(denominator)`; a zero denominator fails the constraint."""
        return self._constrain(RatioOfSums(numerator, denominator), assertion, hint=hint)

    def has_duplicate_row_count(
        self, columns: str | Sequence[str], assertion: MetricAssertion, hint: str = ""
    ) -> Self:
        """The number of rows whose key (the columns) occurs more than once."""
        names = _names(columns)
        return self._constrain(
            DuplicateRowCount(names), assertion, hint=hint, row_condition=_unique_rows(names)
        )

    def custom_sql(
        self,
        expression: str,
        assertion: MetricAssertion,
        hint: str = "",
        *,
        view: str | None = "primary",
    ) -> Self:
        """The one value a SQL statement returns, the data being the temporary view `view`:
        `.custom_sql("SELECT count(*) FROM primary WHERE amount < 0", lambda n: n == 0)`."""
        return self.add_constraint(
            CustomSql(expression, view),
            assertion,
            f"CustomSqlConstraint({expression})",
            hint=hint,
        )

    def has_predictability(
        self,
        column: str,
        input_columns: Sequence[str],
        assertion: MetricAssertion,
        hint: str = "",
        **options: object,
    ) -> Self:
        """How well a naive Bayes model on hashed tokens of `input_columns` predicts `column` on
        held-out rows (F1, macro, by default; `options` are those of `Predictability`).

            Check(CheckLevel.WARNING, "flights").has_predictability(
                "carrier", ["tailnum"], lambda f1: f1 > 0.9)
        """
        return self.add_constraint(
            Predictability(column, tuple(input_columns), **options),  # type: ignore[arg-type]
            assertion,
            f"PredictabilityConstraint({column} from {', '.join(input_columns)})",
            hint=hint,
        )

    # -- history ----------------------------------------------------------------------------
    def has_no_anomalies(
        self,
        analyzer: Analyzer,
        strategy: AnomalyStrategy,
        *,
        per_partition: bool = False,
        exclude_failed: bool = True,
        tags: Mapping[str, str] | None = None,
        hint: str = "",
        sensitivity: str | None = None,
        min_change: float | None = None,
    ) -> Self:
        """The metric is not anomalous compared with its history in the metrics repository
        (`VerificationSuite.use_repository`). `exclude_failed` leaves out earlier runs that were
        flagged or failed; the constraint reports the bounds it used.

        With `per_partition`, the newest partition an incremental run read (its daily volume,
        say) is compared with the earlier partitions instead of the whole dataset with earlier
        runs; a run that read no new partition holds with a note.

            Check(CheckLevel.WARNING, "daily volume").has_no_anomalies(
                Size(), OnlineNormal(), per_partition=True)
        """
        if problem := sensitivity_problem(sensitivity, min_change):
            raise ValueError(problem)
        scope = ", per partition" if per_partition else ""
        spec = AnomalySpec(
            strategy, exclude_failed, dict(tags or {}), per_partition, sensitivity, min_change
        )
        return self.add_constraint(
            analyzer,
            lambda _: True,
            f"AnomalyConstraint({analyzer!r}, {type(strategy).__name__}{scope})",
            hint=hint,
        )._with_anomaly(spec)

    def _with_anomaly(self, spec: AnomalySpec) -> Self:
        self._constraints[-1] = dataclasses.replace(self._constraints[-1], anomaly=spec)
        return self
