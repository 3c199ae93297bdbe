"""Metric values: what an analyzer reports, either a value or an error with a message."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from checkers.metrics._analyzer import Analyzer
    from checkers.metrics.agreement import Agreement

#: A number, or a mapping for distributions (histograms, quantile sets, type shares).
MetricValue = float | dict[str, object]


class Entity(StrEnum):
    """What a metric describes, as in Deequ."""

    DATASET = "Dataset"
    COLUMN = "Column"
    MULTICOLUMN = "Multicolumn"


class MetricSource(StrEnum):
    """Where a metric's value came from: a scan of the data, the files' metadata (footers, a
    table format's log or manifests, the schema), or states stored by earlier runs."""

    SCAN = "scan"
    METADATA = "metadata"
    STATES = "states"


class MetricComputationError(Exception):
    """Raised inside the engine when a state cannot yield a metric (for example an empty state)."""


class EmptyStateError(MetricComputationError):
    """No rows (or only NULLs) reached the analyzer, so its metric is undefined."""


@dataclass(frozen=True)
class Metric:
    """One analyzer's result: `value` when it could be computed, otherwise `error` says why."""

    analyzer: Analyzer
    value: MetricValue | None = None
    error: str | None = None
    #: The error is an empty state: no rows (or no non-NULL values) reached the analyzer.
    empty: bool = False
    #: A sketch's answer: the values a recomputation from scratch may give (None: exactly this).
    agreement: Agreement | None = field(default=None, compare=False)
    source: MetricSource = MetricSource.SCAN

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def name(self) -> str:
        return self.analyzer.metric_name

    @property
    def instance(self) -> str:
        return self.analyzer.instance

    @property
    def entity(self) -> Entity:
        return self.analyzer.entity

    def __repr__(self) -> str:
        shown = f"value={self.value!r}" if self.ok else f"error={self.error!r}"
        return f"Metric({self.analyzer!r}, {shown})"
