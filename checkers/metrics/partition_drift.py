"""How far a numeric column's distribution moved in the newest partition: the Kolmogorov-Smirnov
distance between its KLL sketch and the previous `window` partitions' sketches merged, from the
states an incremental check keeps per partition. The sketch is aggregated in the pass that reads
the new partition; the comparison takes no Spark job."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from checkers.metrics._analyzer import Analyzer, State
from checkers.metrics._metric import Metric, MetricComputationError
from checkers.metrics.distance import ks_distance, merged
from checkers.metrics.sketches import DEFAULT_KLL_K, KllState, _Quantiles

#: Partitions before the newest one that make its reference distribution, unless told.
DEFAULT_WINDOW = 30


@dataclass(frozen=True, repr=False)
class KsDrift(_Quantiles):
    """KS distance of `column` between the newest partition and the `window` before it, with
    the small-sample correction (`robust`: 0 means no evidence of a shift) unless told not to.
    Only an incremental check has partitions to compare: elsewhere its metric is an error.

    >>> Check(CheckLevel.WARNING, "delays").has_no_drift("arr_delay", ks_max=0.1)
    """

    column: str
    window: int = DEFAULT_WINDOW
    robust: bool = True
    where: str | None = None
    k: int = DEFAULT_KLL_K

    def __post_init__(self) -> None:
        if self.window < 1:
            raise ValueError(f"KsDrift needs a window of at least one partition: {self.window}")

    def compute_value(self, state: KllState) -> float:  # type: ignore[override]
        raise MetricComputationError(
            f"{self!r} compares partitions: it needs an incremental check (states kept per "
            "partition), not one pass over the whole"
        )

    def metric_from_partitions(self, ordered: Sequence[KllState]) -> Metric:
        """The metric from each partition's state, oldest first (the newest is compared)."""
        if len(ordered) < 2:
            return Metric(self, error=f"{self!r}: no earlier partition to compare with")
        newest, reference = ordered[-1], merged(ordered[-1 - self.window : -1])
        if newest.load().is_empty():
            return Metric(self, error=f"{self!r}: the newest partition has no values", empty=True)
        found = ks_distance(newest, reference)
        return Metric(self, value=found.robust() if self.robust else found.distance)


def metrics_across_partitions(
    analyzers: Sequence[Analyzer], ordered: Sequence[Mapping[Analyzer, State | object]]
) -> dict[Analyzer, Metric]:
    """The metrics of analyzers that compare partitions (KsDrift), from each partition's
    states oldest first; a partition without a state for one is left out of its comparison."""
    return {
        a: a.metric_from_partitions(
            [s for part in ordered if isinstance(s := part.get(a), KllState)]
        )
        for a in analyzers
        if isinstance(a, KsDrift)
    }
