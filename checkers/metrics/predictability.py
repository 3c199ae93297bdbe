"""Predictability (the differential Deequ paper's metric): how well a multinomial naive Bayes model
on hashed tokens of some columns predicts another column, scored on held-out rows. Features, the
train/test split, training counts and scoring are all DataFrame expressions (Spark Connect works).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import DataType

from checkers.metrics._analyzer import OwnPassAnalyzer, State
from checkers.metrics._metric import EmptyStateError, MetricComputationError
from checkers.metrics._naive_bayes import (
    ConfusionCounts,
    NaiveBayesCounts,
    PredictabilityState,
)
from checkers.metrics._schema import column, is_groupable

#: Tokens are maximal runs of letters and digits (any script), lower-cased.
TOKEN_SEPARATORS = r"[^\p{L}\p{N}]+"
#: The split hashes each row into this many buckets; the first `test_fraction` of them are held out.
SPLIT_BUCKETS = 10_000
# Marker features (hashed features are >= 0): a training row; a held-out row; in the scoring
# model, a class's log prior and the log theta of features never seen with the class.
_DOCUMENT, _HELD_OUT, _PRIOR, _UNSEEN = -1, -2, -3, -4
METRICS = ("precision", "recall", "f1")
AVERAGES = ("macro", "weighted", "micro")


def hashed_tokens(columns: Sequence[str], num_features: int) -> Column:
    """array<int>: each column's tokens (its string value, lower-cased, split on runs of
    characters that are neither letters nor digits), prefixed with `column:` (so one word in two
    columns is two features) and hashed with xxhash64 into `num_features` buckets. A NULL value
    has no tokens."""
    parts = [
        F.coalesce(_column_features(name, num_features), F.array().cast("array<int>"))
        for name in columns
    ]
    return F.concat(*parts) if len(parts) > 1 else parts[0]


def _column_features(name: str, num_features: int) -> Column:
    text = F.lower(column(name).cast("string"))
    tokens = F.filter(F.split(text, TOKEN_SEPARATORS), lambda t: t != F.lit(""))
    prefix = F.lit(f"{name}:")
    # one-argument lambda: transform would pass an element's index as a second argument
    hashed = F.transform(
        tokens, lambda t: F.pmod(F.xxhash64(F.concat(prefix, t)), F.lit(num_features))
    )
    return hashed.cast("array<int>")


def held_out(key: Sequence[Column], seed: int, test_fraction: float) -> Column:
    """TRUE for held-out rows: `pmod(xxhash64(seed, *key), 10000) < 10000 * test_fraction`. The
    key is the row's content (or a row key), so re-runs and appended data split the same way."""
    bucket = F.pmod(F.xxhash64(F.lit(seed), *key), F.lit(SPLIT_BUCKETS))
    return bucket < F.lit(round(test_fraction * SPLIT_BUCKETS))


def _quoted(name: str) -> Column:
    return F.col("`" + name.replace("`", "``") + "`")


@dataclass(frozen=True, repr=False)
class Predictability(OwnPassAnalyzer):
    """How predictable `column` is from `input_columns`: `metric` ("precision", "recall" or
    "f1", averaged "macro", "weighted" or "micro") of a multinomial naive Bayes model trained on
    `1 - test_fraction` of the rows and scored on the rest.

        Predictability("carrier", ["tailnum"])              # macro F1 on held-out flights
    """

    column: str
    input_columns: tuple[str, ...]
    _: KW_ONLY
    metric: str = "f1"
    average: str = "macro"
    test_fraction: float = 0.2
    seed: int = 42
    num_features: int = 2**18
    smoothing: float = 1.0
    row_key: tuple[str, ...] | None = None
    where: str | None = None

    def __post_init__(self) -> None:
        inputs = (
            (self.input_columns,)
            if isinstance(self.input_columns, str)
            else tuple(self.input_columns)
        )
        object.__setattr__(self, "input_columns", inputs)
        if self.row_key is not None:
            key = (self.row_key,) if isinstance(self.row_key, str) else tuple(self.row_key)
            object.__setattr__(self, "row_key", key)
        if not inputs:
            raise ValueError("Predictability needs at least one input column")
        if self.column in inputs:
            raise ValueError(f"Predictability: the target {self.column!r} is also an input")
        if self.metric not in METRICS:
            raise ValueError(
                f"Predictability: metric must be one of {METRICS}, not {self.metric!r}"
            )
        if self.average not in AVERAGES:
            raise ValueError(
                f"Predictability: average must be one of {AVERAGES}, not {self.average!r}"
            )
        if not 0 < self.test_fraction < 1:
            raise ValueError("Predictability: test_fraction must be between 0 and 1 (exclusive)")
        n = self.num_features
        if n < 1 or n & (n - 1):
            raise ValueError(f"Predictability: num_features must be a power of two, not {n}")
        if not self.smoothing > 0:
            raise ValueError("Predictability: smoothing must be positive")

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.column, *self.input_columns, *(self.row_key or ()))

    def column_type_error(self, dtype: DataType) -> str | None:
        return None if is_groupable(dtype) else "maps can be neither a class nor hashed"

    def zero_state(self) -> PredictabilityState:
        return PredictabilityState.zero()

    # -- Spark ------------------------------------------------------------------------------------
    def _rows(self, df: DataFrame) -> DataFrame:
        label = column(self.column).cast("string")
        keep = label.isNotNull()
        if self.where is not None:
            keep = keep & F.coalesce(F.expr(self.where), F.lit(False))
        return df.where(keep).select(
            label.alias("label"),
            hashed_tokens(self.input_columns, self.num_features).alias("features"),
            held_out(self._split_key(df), self.seed, self.test_fraction).alias("held_out"),
        )

    def _split_key(self, df: DataFrame) -> list[Column]:
        """`row_key`, or else every column of the row (maps aside: they cannot be hashed)."""
        if self.row_key is not None:
            return [column(c) for c in self.row_key]
        return [_quoted(f.name) for f in df.schema.fields if is_groupable(f.dataType)]

    def compute_state(
        self, df: DataFrame, earlier: State | None
    ) -> tuple[PredictabilityState, int]:
        """One job counts (class, feature) over the training rows (and held-out rows per class);
        a second scores the held-out rows with the model merged with `earlier`'s."""
        rows = self._rows(df)
        markers = F.when(F.col("held_out"), F.array(F.lit(_HELD_OUT))).otherwise(
            F.concat(F.array(F.lit(_DOCUMENT)), F.col("features"))
        )
        counted = (
            rows.select("label", F.explode(markers).alias("feature"))
            .groupBy("label", "feature")
            .count()
            .collect()
        )
        documents: dict[str, int] = {}
        tokens: dict[str, dict[int, int]] = {}
        held = 0
        for label, feature, n in counted:
            if feature == _DOCUMENT:
                documents[label] = n
            elif feature == _HELD_OUT:
                held += n
            else:
                tokens.setdefault(label, {})[feature] = n
        model = NaiveBayesCounts(documents, tokens)
        if isinstance(earlier, PredictabilityState):
            scoring_model = model.merge(earlier.model)
        else:
            scoring_model = model
        if held == 0 or not scoring_model.documents:
            return PredictabilityState(model, ConfusionCounts()), 1
        return PredictabilityState(model, self._evaluate(rows, scoring_model)), 2

    def _evaluate(self, rows: DataFrame, model: NaiveBayesCounts) -> ConfusionCounts:
        """argmax_k [log prior_k + sum_i n_i log theta_ki] per held-out row (ties go to the
        greatest class); the confusion counts of (actual, predicted)."""
        parameters = model.log_parameters(self.num_features, self.smoothing)
        seen = {i for _, _, extra in parameters.values() for i in extra}
        if len(seen) * len(parameters) <= MODEL_ROW_CELLS:
            scored = _scored_by_row(rows, parameters, seen)
        else:
            scored = _scored_by_join(rows, parameters)
        pairs: dict[str, dict[str, int]] = {}
        for label, predicted, n in scored.groupBy("label", "predicted").count().collect():
            pairs.setdefault(label, {})[predicted] = n
        return ConfusionCounts(pairs)

    # -- metric -----------------------------------------------------------------------------------
    def compute_value(self, state: State) -> float:
        if not isinstance(state, PredictabilityState):
            raise MetricComputationError(f"{self!r}: not a predictability state: {state!r}")
        if not state.model.documents and not state.evaluation.pairs:
            raise EmptyStateError(f"Empty state for {self!r}: no rows with a non-NULL target")
        if len(state.model.documents) < 2:
            raise MetricComputationError(
                f"{self!r}: the training rows have {len(state.model.documents)} class(es) of "
                f"{self.column!r}; predicting needs at least two"
            )
        if not state.evaluation.pairs:
            raise EmptyStateError(f"Empty state for {self!r}: no held-out rows to score")
        return state.evaluation.score(self.metric, self.average)


#: Above this many (seen feature, class) cells the model is scored by a join, not as one row.
MODEL_ROW_CELLS = 2_000_000

Parameters = dict[str, tuple[float, float, dict[int, float]]]


def _scored_by_row(rows: DataFrame, parameters: Parameters, seen: set[int]) -> DataFrame:
    """(label, predicted) per held-out row, the model being one broadcast row: each seen
    feature's per-class log-ratios as an array, summed over the row's tokens with one map
    lookup per token; no row is multiplied."""
    classes = sorted(parameters)
    extras = {i: [parameters[k][2].get(i, 0.0) for k in classes] for i in sorted(seen)}
    model = rows.sparkSession.createDataFrame(
        [
            (
                classes,
                [parameters[k][0] for k in classes],
                [parameters[k][1] for k in classes],
                extras,
            )
        ],
        "classes array<string>, prior array<double>, unseen array<double>, "
        "extras map<int, array<double>>",
    )
    zeros = F.array_repeat(F.lit(0.0), len(classes))

    def plus(first: Column, second: Column) -> Column:
        return F.zip_with(first, second, lambda a, b: a + b)

    tokens = F.aggregate(
        "features",
        zeros,
        lambda total, i: plus(total, F.coalesce(F.try_element_at("extras", i), zeros)),
    )
    size = F.size("features").cast("double")
    base = F.zip_with("prior", "unseen", lambda prior, unseen: prior + unseen * size)
    best = F.array_max(
        F.zip_with(
            plus(base, tokens),
            "classes",
            lambda score, label: F.struct(score.alias("score"), label.alias("class")),
        )
    )
    return (
        rows.where(F.col("held_out"))
        .select("label", "features")
        .crossJoin(F.broadcast(model))
        .select("label", best["class"].alias("predicted"))
    )


def _scored_by_join(rows: DataFrame, parameters: Parameters) -> DataFrame:
    """(label, predicted) per held-out row for a model too large for one row: a small table
    (class, feature, value) broadcast to the held-out rows' tokens; two markers per row bring
    every class's prior and unseen-feature term."""
    entries = []
    for label, (prior, unseen, extra) in parameters.items():
        entries.append((label, _PRIOR, prior))
        entries.append((label, _UNSEEN, unseen))
        entries.extend((label, i, value) for i, value in extra.items())
    spark = rows.sparkSession
    table = spark.createDataFrame(entries, "class string, feature int, value double")

    def entry(feature: Column, weight: Column) -> Column:
        return F.struct(feature.alias("feature"), weight.cast("double").alias("weight"))

    per_row = F.concat(
        F.transform("features", lambda i: entry(i, F.lit(1))),
        F.array(entry(F.lit(_PRIOR), F.lit(1)), entry(F.lit(_UNSEEN), F.size("features"))),
    )
    return (
        rows.where(F.col("held_out"))
        .select("label", "features", F.monotonically_increasing_id().alias("row"))
        .select("row", "label", F.inline(per_row))  # the id is set before rows multiply
        .join(F.broadcast(table), "feature")
        .groupBy("row", "label", "class")
        .agg(F.sum(F.col("weight") * F.col("value")).alias("score"))
        .groupBy("row", "label")
        .agg(F.max(F.struct("score", "class"))["class"].alias("predicted"))
    )


__all__ = ["Predictability", "PredictabilityState", "hashed_tokens", "held_out"]
