"""Pytest helpers for teams: run a check on a handful of rows and assert its outcome.

def test_late_flights_warn(spark):
    assert_outcome(LateFlights, rows=[("UA", 1, 700.0)], level=AlertLevel.WARNING)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType

from checkers.levels import AlertLevel
from checkers.outcome import CheckOutcome, Status
from checkers.spark import spark_session
from checks.base import QualityCheck
from checks.evaluation import evaluate_check

Rows = Sequence[tuple[object, ...]] | Sequence[Mapping[str, object]]


def frame_of(spark: SparkSession, rows: Rows, schema: str | StructType | None = None) -> DataFrame:
    """A DataFrame of `rows` (tuples need a schema; dicts may infer it)."""
    records = [dict(r) if isinstance(r, Mapping) else r for r in rows]
    if schema is not None and records and isinstance(records[0], dict):
        names = [f.name for f in spark.createDataFrame([], schema).schema.fields]
        records = [tuple(r.get(n) for n in names) for r in records]  # type: ignore[union-attr]
    return spark.createDataFrame(records, schema)  # type: ignore[arg-type]


def run_on_rows(
    check: type[QualityCheck],
    rows: Rows | Mapping[str, Rows],
    *,
    schema: str | StructType | Mapping[str, str | StructType] | None = None,
    spark: SparkSession | None = None,
) -> CheckOutcome:
    """The check's outcome on hand-made rows instead of its sources. The schema defaults to the
    parser's promised schema; for checks with several parsers, give rows (and schemas) by name."""
    session = spark or SparkSession.getActiveSession() or spark_session()
    parsers = check.parsers()
    if check.takes_mapping():
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
    return evaluate_check(check, spark=session, data=data)


def assert_outcome(
    check: type[QualityCheck],
    *,
    rows: Rows | Mapping[str, Rows],
    level: AlertLevel | None = None,
    status: Status | None = None,
    schema: str | StructType | Mapping[str, str | StructType] | None = None,
    spark: SparkSession | None = None,
) -> CheckOutcome:
    """Run `check` on `rows` and assert its level (OK means passed or tolerated) and/or status."""
    if level is None and status is None:
        raise TypeError("assert_outcome needs level= or status=")
    outcome = run_on_rows(check, rows, schema=schema, spark=spark)
    if status is not None:
        assert outcome.status is status, f"expected {status.value}, got {outcome.summary()}"
    if level is not None:
        assert outcome.level is level, f"expected {level.name}, got {outcome.summary()}"
    return outcome
