"""The compliance and pattern constraints of `Check`: SQL predicates over each row."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Self

from pyspark.sql import functions as F

from checkers.metrics._check_core import CheckCore, _literal, _quote, _sql_rows, is_one
from checkers.metrics.constraints import MetricAssertion
from checkers.metrics.counts import Compliance, PatternMatch, Patterns


class ComplianceConstraints(CheckCore):
    # -- compliance family ----------------------------------------------------------------------
    def _compliance(
        self,
        name: str,
        predicate: str,
        columns: Sequence[str],
        assertion: MetricAssertion,
        hint: str,
    ) -> Self:
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
    ) -> Self:
        """Share of rows where the SQL `predicate` is TRUE (NULL counts as not compliant)."""
        return self._compliance(name, predicate, columns, assertion, hint)

    def is_non_negative(
        self, column: str, assertion: MetricAssertion = is_one, hint: str = ""
    ) -> Self:
        """NULL passes, as in Deequ."""
        predicate = f"COALESCE(CAST({_quote(column)} AS DOUBLE), 0.0) >= 0"
        return self._compliance(f"{column} is non-negative", predicate, [column], assertion, hint)

    def is_positive(self, column: str, assertion: MetricAssertion = is_one, hint: str = "") -> Self:
        """NULL passes, as in Deequ."""
        predicate = f"COALESCE(CAST({_quote(column)} AS DOUBLE), 1.0) > 0"
        return self._compliance(f"{column} is positive", predicate, [column], assertion, hint)

    def _compare(
        self, a: str, b: str, operator: str, words: str, assertion: MetricAssertion, hint: str
    ) -> Self:
        """NULL in either column is not compliant, as in Deequ."""
        return self._compliance(
            f"{a} {words} {b}", f"{_quote(a)} {operator} {_quote(b)}", [a, b], assertion, hint
        )

    def is_less_than(
        self, a: str, b: str, assertion: MetricAssertion = is_one, hint: str = ""
    ) -> Self:
        return self._compare(a, b, "<", "is less than", assertion, hint)

    def is_less_than_or_equal_to(
        self, a: str, b: str, assertion: MetricAssertion = is_one, hint: str = ""
    ) -> Self:
        return self._compare(a, b, "<=", "is less than or equal to", assertion, hint)

    def is_greater_than(
        self, a: str, b: str, assertion: MetricAssertion = is_one, hint: str = ""
    ) -> Self:
        return self._compare(a, b, ">", "is greater than", assertion, hint)

    def is_greater_than_or_equal_to(
        self, a: str, b: str, assertion: MetricAssertion = is_one, hint: str = ""
    ) -> Self:
        return self._compare(a, b, ">=", "is greater than or equal to", assertion, hint)

    def is_contained_in(
        self,
        column: str,
        allowed: Sequence[object],
        assertion: MetricAssertion = is_one,
        hint: str = "",
    ) -> Self:
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
    ) -> Self:
        """Values within bounds; NULL passes, as in Deequ."""
        low, high = (">=" if include_lower else ">"), ("<=" if include_upper else "<")
        q = _quote(column)
        predicate = f"{q} IS NULL OR ({q} {low} {lower!r} AND {q} {high} {upper!r})"
        return self._compliance(
            f"{column} between {lower} and {upper}", predicate, [column], assertion, hint
        )

    # -- patterns -------------------------------------------------------------------------------
    def has_pattern(
        self,
        column: str,
        pattern: str,
        assertion: MetricAssertion = is_one,
        name: str = "",
        hint: str = "",
    ) -> Self:
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
    ) -> Self:
        return self.has_pattern(
            column, Patterns.EMAIL, assertion, f"ContainsEmailConstraint({column})", hint
        )

    def contains_url(
        self, column: str, assertion: MetricAssertion = is_one, hint: str = ""
    ) -> Self:
        return self.has_pattern(
            column, Patterns.URL, assertion, f"ContainsURLConstraint({column})", hint
        )

    def contains_credit_card_number(
        self, column: str, assertion: MetricAssertion = is_one, hint: str = ""
    ) -> Self:
        return self.has_pattern(
            column, Patterns.CREDITCARD, assertion, f"ContainsCreditCardConstraint({column})", hint
        )

    def contains_social_security_number(
        self, column: str, assertion: MetricAssertion = is_one, hint: str = ""
    ) -> Self:
        return self.has_pattern(
            column,
            Patterns.SOCIAL_SECURITY_NUMBER_US,
            assertion,
            f"ContainsSSNConstraint({column})",
            hint,
        )
