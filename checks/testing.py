"""Pytest helpers for teams: run a check on a handful of rows and assert its outcome.

def test_late_flights_warn(spark):
    assert_outcome(LateFlights, rows=[("UA", 1, 700.0)], level=AlertLevel.WARNING)
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import DoubleType, FloatType, StructType

from checkers.levels import AlertLevel
from checkers.outcome import CheckOutcome, Status
from checkers.spark import spark_session
from checks.base import QualityCheck

Rows = Sequence[tuple[object, ...]] | Sequence[Mapping[str, object]]


def frame_of(spark: SparkSession, rows: Rows, schema: str | StructType | None = None) -> DataFrame:
    """A DataFrame of `rows` (tuples need a schema; dicts may infer it). With a schema, dicts may
    leave columns out (NULL) and integers are accepted for fractional columns."""
    records = [dict(r) if isinstance(r, Mapping) else r for r in rows]
    if schema is None:
        return spark.createDataFrame(records)
    fields = spark.createDataFrame([], schema).schema.fields
    names = [f.name for f in fields]
    fractional = [isinstance(f.dataType, DoubleType | FloatType) for f in fields]
    tuples = [tuple(r.get(n) for n in names) if isinstance(r, dict) else tuple(r) for r in records]
    coerced = [
        tuple(
            float(v) if frac and isinstance(v, int) and not isinstance(v, bool) else v
            for v, frac in zip(row, fractional, strict=True)
        )
        for row in tuples
    ]
    return spark.createDataFrame(coerced, schema)


def evaluate_check(
    check: type[QualityCheck],
    *,
    spark: SparkSession | None = None,
    now: dt.datetime | None = None,
    data: DataFrame | Mapping[str, DataFrame] | None = None,
) -> CheckOutcome:
    """The check's outcome on its own sources (with `data`, on that DataFrame or those DataFrames
    by source name instead), computed as a tick would, without recording or alerting."""
    # The runtime (scheduling.tick) runs the check; the user API only names it (import rules:
    # docs/architecture.md).
    from scheduling.tick.evaluate import evaluate_check as evaluate

    return evaluate(check, spark=spark, now=now, data=data)


def run_on_rows(
    check: type[QualityCheck],
    rows: Rows | Mapping[str, Rows],
    *,
    schema: str | StructType | Mapping[str, str | StructType] | None = None,
    spark: SparkSession | None = None,
    now: dt.datetime | None = None,
) -> CheckOutcome:
    """The check's outcome on hand-made rows instead of its sources. The schema defaults to the
    parser's promised schema; for checks with several parsers, give rows (and schemas) by name."""
    session = spark or SparkSession.getActiveSession() or spark_session()
    instance = check(now=now)
    parsers = instance.sources()
    if instance.takes_mapping():
        if not isinstance(rows, Mapping):
            raise TypeError(f"{check.name} reads {sorted(parsers)}: give rows by those names")
        schemas = schema if isinstance(schema, Mapping) else {}
        data: DataFrame | dict[str, DataFrame] = {
            name: frame_of(session, rows[name], schemas.get(name) or parsers[name].schema)
            for name in parsers
        }
    else:
        promised = schema if not isinstance(schema, Mapping) else None
        data = frame_of(session, rows, promised or parsers["data"].schema)  # type: ignore[arg-type]
    return evaluate_check(check, spark=session, data=data, now=now)


def assert_outcome(
    check: type[QualityCheck],
    *,
    rows: Rows | Mapping[str, Rows],
    level: AlertLevel | None = None,
    status: Status | None = None,
    schema: str | StructType | Mapping[str, str | StructType] | None = None,
    spark: SparkSession | None = None,
    now: dt.datetime | None = None,
) -> CheckOutcome:
    """Run `check` on `rows` and assert its level (OK means passed or tolerated) and/or status."""
    if level is None and status is None:
        raise TypeError("assert_outcome needs level= or status=")
    outcome = run_on_rows(check, rows, schema=schema, spark=spark, now=now)
    if status is not None:
        assert outcome.status is status, f"expected {status.value}, got {outcome.summary()}"
    if level is not None:
        assert outcome.level is level, f"expected {level.name}, got {outcome.summary()}"
    return outcome
