"""How far a metric computed from merged states may differ from the same metric computed from
scratch over the same data: exactly (counts, sums, frequency tables), or within the bounds a
sketch documents (KLL's rank error, HLL's relative error). The drift guard (`dq run --full`)
compares by these, not by a fixed tolerance."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

#: Standard deviations of an HLL estimate a recomputation may fall within (99.7%).
HLL_DEVIATIONS = 3


@dataclass(frozen=True)
class Agreement:
    """The values a recomputation of the same data may answer: inclusive `(low, high)` bounds
    per key of the metric's value (`""` for a single number, `str(q)` for one of several
    quantiles), and why (shown when a difference is reported)."""

    bounds: Mapping[str, tuple[float, float]]
    why: str

    def admits(self, value: object) -> bool:
        if isinstance(value, Mapping):
            return value.keys() == self.bounds.keys() and all(
                self._within(k, v) for k, v in value.items()
            )
        return self._within("", value)

    def _within(self, key: str, value: object) -> bool:
        if key not in self.bounds or not isinstance(value, (int, float)):
            return False
        low, high = self.bounds[key]
        return not math.isnan(value) and low <= value <= high

    def as_json(self) -> dict[str, object]:
        return {"bounds": {k: list(v) for k, v in self.bounds.items()}, "why": self.why}
