"""Distances between two distributions from states the engine already keeps, so comparing a
partition with the previous one, a window of history or a pinned baseline needs no extra scan:
Kolmogorov-Smirnov between KLL sketches (numeric columns), population stability index and
chi-square between category counts (categorical ones, e.g. a Histogram metric's counts).

Deequ's `Distance` module (never wired into its checks) has the same three; ours differ where
its choices surprise: `ks_distance` is the plain L-infinity distance and `robust` asks for the
small-sample correction explicitly (Deequ's flag reads backwards), and PSI smooths empty buckets
instead of answering infinity."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import reduce

from checkers.metrics._analyzer import Analyzer
from checkers.metrics.sketches import KllState
from checkers.metrics.state_stores import StateStore

#: Deequ's default c(alpha) for the robust KS distance (alpha about 0.003).
DEFAULT_KS_C = 1.8
#: Share given to a bucket empty on one side, so PSI stays finite (a common convention).
PSI_EPSILON = 1e-4
#: How finely the union of both sketches' quantiles is sampled for split points.
_GRID = 512


@dataclass(frozen=True)
class KsResult:
    """The KS distance (L-infinity between the two CDFs) and both sample sizes."""

    distance: float
    n: int
    m: int

    def robust(self, c: float = DEFAULT_KS_C) -> float:
        """The distance minus what two samples of these sizes differ by anyway:
        `max(0, D - c*sqrt((n+m)/(n*m)))`; 0 means no evidence of a shift."""
        if self.n == 0 or self.m == 0:
            return 0.0
        return max(0.0, self.distance - c * math.sqrt((self.n + self.m) / (self.n * self.m)))


def merged(states: Iterable[KllState]) -> KllState:
    """One sketch of several partitions' (a window of history)."""
    return reduce(lambda a, b: a.merge(b), states)


def ks_distance(a: KllState, b: KllState) -> KsResult:
    """The largest difference between the two sketches' CDFs, evaluated at split points taken
    from both sketches' quantiles (no Spark job)."""
    first, second = a.load(), b.load()
    if first.is_empty() or second.is_empty():
        return KsResult(0.0, first.n, second.n)
    ranks = [i / _GRID for i in range(_GRID + 1)]
    points = sorted(set(first.get_quantiles(ranks)) | set(second.get_quantiles(ranks)))
    cdf_a, cdf_b = first.get_cdf(points), second.get_cdf(points)
    distance = max(abs(x - y) for x, y in zip(cdf_a, cdf_b, strict=False))
    return KsResult(float(distance), first.n, second.n)


def _shares(counts: Mapping[object, float], keys: Iterable[object]) -> dict[object, float]:
    total = sum(counts.values())
    return {k: (counts.get(k, 0) / total if total else 0.0) for k in keys}


def population_stability_index(
    actual: Mapping[object, float],
    expected: Mapping[object, float],
    *,
    epsilon: float = PSI_EPSILON,
) -> float:
    """PSI = sum over buckets of (a - e) * ln(a / e), on bucket shares; a bucket empty on one
    side counts as `epsilon` (Deequ's gives infinity). Below 0.1 is usually read as stable, above
    0.25 as a major shift."""
    keys = set(actual) | set(expected)
    a, e = _shares(actual, keys), _shares(expected, keys)
    return sum(
        (max(a[k], epsilon) - max(e[k], epsilon))
        * math.log(max(a[k], epsilon) / max(e[k], epsilon))
        for k in keys
    )


@dataclass(frozen=True)
class ChiSquareResult:
    statistic: float
    degrees_of_freedom: int
    p_value: float


def chi_square(actual: Mapping[object, float], expected: Mapping[object, float]) -> ChiSquareResult:
    """Pearson's goodness-of-fit of `actual` counts to `expected` proportions (rescaled to the
    actual total), over the expected categories; categories only in `actual` count against
    the fit with an expected share of zero replaced by one count (so a new category is seen).
    p-value from the chi-square distribution (regularised upper incomplete gamma)."""
    keys = sorted(set(actual) | set(expected), key=repr)
    total_actual = sum(actual.values())
    total_expected = sum(expected.values())
    if len(keys) < 2 or not total_actual or not total_expected:
        return ChiSquareResult(0.0, 0, 1.0)
    statistic = 0.0
    for k in keys:
        wanted = max(expected.get(k, 0) / total_expected * total_actual, 1.0)
        statistic += (actual.get(k, 0) - wanted) ** 2 / wanted
    dof = len(keys) - 1
    return ChiSquareResult(statistic, dof, _upper_gamma_q(dof / 2, statistic / 2))


def _upper_gamma_q(s: float, x: float) -> float:
    """Q(s, x) = Gamma(s, x) / Gamma(s): series below s + 1, continued fraction above."""
    if x <= 0:
        return 1.0
    log_front = -x + s * math.log(x) - math.lgamma(s)
    if x < s + 1:
        term = total = 1.0 / s
        a = s
        for _ in range(500):
            a += 1
            term *= x / a
            total += term
            if abs(term) < abs(total) * 1e-15:
                break
        return max(0.0, 1.0 - total * math.exp(log_front))
    b, c, d = x + 1 - s, 1e300, 1.0 / (x + 1 - s)
    h = d
    for i in range(1, 500):
        an = -i * (i - s)
        b += 2
        d = an * d + b
        d = 1e-300 if abs(d) < 1e-300 else d
        c = b + an / c
        c = 1e-300 if abs(c) < 1e-300 else c
        d = 1.0 / d
        h *= d * c
        if abs(d * c - 1) < 1e-15:
            break
    return min(1.0, h * math.exp(log_front))


def stored_ks(
    store: StateStore,
    analyzer: Analyzer,
    *,
    dataset: str,
    partition: str,
    reference: Sequence[str],
) -> KsResult:
    """KS between the stored sketch of `analyzer` (an ApproxQuantile's or any KLL state) in
    `partition` and the merge of those in `reference` partitions (the previous one, a window,
    a pinned baseline): read from the store, no Spark job. A missing state raises KeyError."""
    found = store.load(dataset, [analyzer], [partition, *reference])
    states = []
    for key in [partition, *reference]:
        state = found.get(key, {}).get(analyzer)
        if not isinstance(state, KllState):
            raise KeyError(f"no stored KLL state of {analyzer!r} for {dataset!r} partition {key!r}")
        states.append(state)
    return ks_distance(states[0], merged(states[1:]))
