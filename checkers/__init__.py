"""dq-checkers: checker classes, tolerances, alert levels, parsers, outcomes and the metrics
engine. Names load lazily, so `from checkers import AlertLevel` (as alerting does) never imports
Spark."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

_EXPORTS = {
    "spark_session": "checkers.spark",
    "spark_target": "checkers.spark",
    "AlertLevel": "checkers.levels",
    "FailingElementsThresholds": "checkers.levels",
    "FailingShareThresholds": "checkers.levels",
    "FixedLevel": "checkers.levels",
    "FailureCounts": "checkers.tolerances",
    "Tolerance": "checkers.tolerances",
    "NoFailures": "checkers.tolerances",
    "LessThan": "checkers.tolerances",
    "ShareAtMost": "checkers.tolerances",
    "KnownBroken": "checkers.tolerances",
    "CheckOutcome": "checkers.outcome",
    "Status": "checkers.outcome",
    "Checker": "checkers.checker",
    "CheckerResult": "checkers.checker",
    "run_checkers": "checkers.checker",
    "PredicateSingleDatasetChecker": "checkers.row_checkers",
    "OffsetPredicateSingleDatasetChecker": "checkers.row_checkers",
    "PredicateDoubleDatasetsChecker": "checkers.double_checkers",
    "AggregateComparisonChecker": "checkers.double_checkers",
    "ConsistencyChecker": "checkers.consistency",
    "SqlTable": "checkers.consistency",
    "MetricChecker": "checkers.metric_checker",
    "MetricConstraint": "checkers.metric_checker",
    "SchemaChecker": "checkers.schema_checker",
    "RecordedSchema": "checkers.schema_checker",
}

__all__ = [
    "AggregateComparisonChecker",
    "AlertLevel",
    "CheckOutcome",
    "Checker",
    "CheckerResult",
    "ConsistencyChecker",
    "FailingElementsThresholds",
    "FailingShareThresholds",
    "FailureCounts",
    "FixedLevel",
    "KnownBroken",
    "LessThan",
    "MetricChecker",
    "MetricConstraint",
    "NoFailures",
    "OffsetPredicateSingleDatasetChecker",
    "PredicateDoubleDatasetsChecker",
    "PredicateSingleDatasetChecker",
    "RecordedSchema",
    "SchemaChecker",
    "ShareAtMost",
    "SqlTable",
    "Status",
    "Tolerance",
    "run_checkers",
    "spark_session",
    "spark_target",
]

if TYPE_CHECKING:
    from checkers.checker import Checker, CheckerResult, run_checkers
    from checkers.consistency import ConsistencyChecker, SqlTable
    from checkers.double_checkers import AggregateComparisonChecker, PredicateDoubleDatasetsChecker
    from checkers.levels import (
        AlertLevel,
        FailingElementsThresholds,
        FailingShareThresholds,
        FixedLevel,
    )
    from checkers.metric_checker import MetricChecker, MetricConstraint
    from checkers.outcome import CheckOutcome, Status
    from checkers.row_checkers import (
        OffsetPredicateSingleDatasetChecker,
        PredicateSingleDatasetChecker,
    )
    from checkers.schema_checker import RecordedSchema, SchemaChecker
    from checkers.spark import spark_session, spark_target
    from checkers.tolerances import (
        FailureCounts,
        KnownBroken,
        LessThan,
        NoFailures,
        ShareAtMost,
        Tolerance,
    )


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'checkers' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
