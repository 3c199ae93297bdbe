"""The state of `Predictability`: a multinomial naive Bayes model's counts and the confusion counts
of its held-out rows. Both are sums, so the state merges by addition; scores come from the
confusion counts in plain Python."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from checkers.metrics._serde import state_kind

Counts = dict[str, int]


def _add(first: Mapping[str, int], second: Mapping[str, int]) -> Counts:
    total = dict(first)
    for key, n in second.items():
        total[key] = total.get(key, 0) + n
    return total


def _add_nested(
    first: Mapping[str, Mapping[Any, int]], second: Mapping[str, Mapping[Any, int]]
) -> dict[str, dict[Any, int]]:
    total = {key: dict(inner) for key, inner in first.items()}
    for key, inner in second.items():
        total[key] = _add(total.get(key, {}), inner)
    return total


@dataclass(frozen=True)
class NaiveBayesCounts:
    """N_k (training rows per class) and N_ki (occurrences of hashed feature i in rows of class
    k); the per-class token total is the sum of N_ki over i."""

    documents: Counts = field(default_factory=dict)
    tokens: dict[str, dict[int, int]] = field(default_factory=dict)

    def merge(self, other: NaiveBayesCounts) -> NaiveBayesCounts:
        return NaiveBayesCounts(
            _add(self.documents, other.documents), _add_nested(self.tokens, other.tokens)
        )

    def token_total(self, label: str) -> int:
        return sum(self.tokens.get(label, {}).values())

    def log_parameters(
        self, num_features: int, smoothing: float
    ) -> dict[str, tuple[float, float, dict[int, float]]]:
        """Per class: (log prior, log theta of a feature never seen with the class, and per
        seen feature how much more its log theta is). Laplace smoothing on both, as Spark ML:
        prior_k = (N_k + a) / (N + K a), theta_ki = (N_ki + a) / (sum_i N_ki + n a)."""
        documents = sum(self.documents.values())
        classes = len(self.documents)
        prior_denominator = math.log(documents + classes * smoothing)
        found = {}
        for label, n in self.documents.items():
            seen = self.tokens.get(label, {})
            unseen = math.log(smoothing) - math.log(
                self.token_total(label) + num_features * smoothing
            )
            extra = {i: math.log(c + smoothing) - math.log(smoothing) for i, c in seen.items()}
            found[label] = (math.log(n + smoothing) - prior_denominator, unseen, extra)
        return found


@dataclass(frozen=True)
class ConfusionCounts:
    """Held-out rows per (actual class, predicted class)."""

    pairs: dict[str, dict[str, int]] = field(default_factory=dict)

    def merge(self, other: ConfusionCounts) -> ConfusionCounts:
        return ConfusionCounts(_add_nested(self.pairs, other.pairs))

    @property
    def rows(self) -> int:
        return sum(sum(row.values()) for row in self.pairs.values())

    def score(self, metric: str, average: str) -> float:
        """Precision, recall or F1, averaged over the classes seen as actual or predicted:
        "macro" (unweighted mean), "weighted" (by actual rows) or "micro" (pooled counts, which
        for one label per row is accuracy). A 0/0 ratio counts as 0 (scikit-learn's default)."""
        total = self.rows
        if average == "micro":
            hits = sum(row.get(label, 0) for label, row in self.pairs.items())
            return hits / total
        labels = set(self.pairs) | {p for row in self.pairs.values() for p in row}
        values, weights = [], []
        for label in sorted(labels):
            tp = self.pairs.get(label, {}).get(label, 0)
            actual = sum(self.pairs.get(label, {}).values())
            predicted = sum(row.get(label, 0) for row in self.pairs.values())
            precision = tp / predicted if predicted else 0.0
            recall = tp / actual if actual else 0.0
            f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
            values.append({"precision": precision, "recall": recall, "f1": f1}[metric])
            weights.append(actual)
        if average == "weighted":
            return sum(v * w for v, w in zip(values, weights, strict=True)) / total
        return sum(values) / len(values)


@state_kind("naive_bayes")
@dataclass(frozen=True)
class PredictabilityState:
    """The model's counts (training rows) and the confusion counts of the held-out rows, each
    scored by the model known when its rows were analyzed (see docs/metrics.md)."""

    model: NaiveBayesCounts = field(default_factory=NaiveBayesCounts)
    evaluation: ConfusionCounts = field(default_factory=ConfusionCounts)

    @classmethod
    def zero(cls) -> PredictabilityState:
        return cls()

    def merge(self, other: PredictabilityState) -> PredictabilityState:
        return PredictabilityState(
            self.model.merge(other.model), self.evaluation.merge(other.evaluation)
        )

    def to_payload(self) -> dict[str, object]:
        tokens = {k: {str(i): n for i, n in v.items()} for k, v in self.model.tokens.items()}
        return {
            "documents": self.model.documents,
            "tokens": tokens,
            "confusion": self.evaluation.pairs,
        }

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any]) -> PredictabilityState:
        tokens = {k: {int(i): n for i, n in v.items()} for k, v in payload["tokens"].items()}
        return cls(
            NaiveBayesCounts(dict(payload["documents"]), tokens),
            ConfusionCounts({k: dict(v) for k, v in payload["confusion"].items()}),
        )
