"""`SchemaChecker`: a dataset's columns against a baseline schema (pinned, a parser's promise, or
an earlier version of a table). Each column is an element: added, removed, retyped or with
changed nullability fails. The schema comes from the DataFrame's plan: no Spark job runs for
sources whose schema is in metadata (table formats, parsers given a schema)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pyspark.sql import DataFrame
from pyspark.sql.types import StructField, StructType

from checkers.checker import Checker, CheckerPlan, CheckerResult
from checkers.metrics import Analyzer, Metric
from checkers.tolerances import KnownBroken


@dataclass(frozen=True)
class ColumnChange:
    """One column that differs from the baseline: `change` is added, removed, type or
    nullability; `was` and `now` say how (a type name, "nullable"/"not null")."""

    column: str
    change: str
    was: str = ""
    now: str = ""

    def as_row(self) -> dict[str, object]:
        return {"column": self.column, "change": self.change, "was": self.was, "now": self.now}


def _nullability(field: StructField) -> str:
    return "nullable" if field.nullable else "not null"


def schema_changes(
    baseline: StructType, actual: StructType, *, nullability: bool = True
) -> list[ColumnChange]:
    """How `actual` differs from `baseline`, column by column (names compared case-insensitively,
    as Spark resolves them), in the order of the baseline, then added columns."""
    now = {f.name.lower(): f for f in actual.fields}
    was = {f.name.lower(): f for f in baseline.fields}
    changes = []
    for name, old in was.items():
        new = now.get(name)
        if new is None:
            changes.append(ColumnChange(old.name, "removed", old.dataType.simpleString()))
        elif new.dataType != old.dataType:
            changes.append(
                ColumnChange(
                    old.name, "type", old.dataType.simpleString(), new.dataType.simpleString()
                )
            )
        elif nullability and new.nullable != old.nullable:
            changes.append(
                ColumnChange(old.name, "nullability", _nullability(old), _nullability(new))
            )
    for name, new in now.items():
        if name not in was:
            changes.append(ColumnChange(new.name, "added", "", new.dataType.simpleString()))
    return changes


class SchemaChecker(Checker):
    """The columns of `dataset` against `baseline` (a StructType, or DDL text such as a parser's
    promised schema). Elements are columns, keyed by name, so `KnownBroken(["legacy_col"])`
    excuses an expected change. `nullability=False` ignores nullability changes (many sources
    report every column nullable).

    >>> SchemaChecker(DeltaParser("lake/orders").load(spark),
    ...               baseline=DeltaParser("lake/orders", version=41).load(spark).schema)
    """

    key = ("column",)

    def __init__(
        self,
        dataset: DataFrame,
        baseline: StructType | str,
        *,
        nullability: bool = True,
    ) -> None:
        self.dataset = dataset
        self.baseline = baseline
        self.nullability = nullability

    def _baseline(self) -> StructType:
        if isinstance(self.baseline, StructType):
            return self.baseline
        from checkers.parsers._base import promised_struct

        return promised_struct(self.dataset.sparkSession, self.baseline)

    def plan(self, excused: Sequence[KnownBroken] = ()) -> CheckerPlan:
        baseline = self._baseline()
        excused_names = {
            str(k[0] if isinstance(k, tuple) else k).lower() for e in excused for k in e.keys
        }

        def finish(metrics: Mapping[Analyzer, Metric]) -> CheckerResult:
            actual = self.dataset.schema
            changes = schema_changes(baseline, actual, nullability=self.nullability)
            columns = {f.name.lower() for f in [*baseline.fields, *actual.fields]}
            unexcused = [c for c in changes if c.column.lower() not in excused_names]
            rows = [c.as_row() for c in [*unexcused, *(c for c in changes if c not in unexcused)]]
            keys: list[object] = [*sorted(c.column for c in (unexcused or changes))]
            return CheckerResult(
                failing=len(changes),
                total=len(columns),
                unexcused=len(unexcused),
                metrics={"changed_columns": len(changes)},
                fetch_sample=lambda limit: rows[:limit],
                fetch_keys=lambda limit: keys[:limit],
            )

        return CheckerPlan(self.dataset, [], finish)
