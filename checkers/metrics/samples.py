"""Bounded samples computed in the shared scan: the k values with the smallest ordering (bottom-k
by a hash, so deterministic and mergeable), up to k distinct values, and how many distinct values
there are (a Theta sketch: exact up to its nominal size, estimated beyond). Checkers use them for
failing rows and failing keys, so a sample or a count costs no pass of its own."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import datasketches as ds
from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import DataType, MapType, StructType, VariantType

from checkers.metrics._analyzer import ScanShareableAnalyzer
from checkers.metrics._metric import Entity
from checkers.metrics._serde import state_kind
from checkers.outcome import json_safe

#: Microseconds survive the JSON round trip of distinct values (Spark's default keeps millis).
_JSON_OPTIONS = {
    "timestampFormat": "yyyy-MM-dd'T'HH:mm:ss.SSSSSSXXX",
    "timestampNTZFormat": "yyyy-MM-dd'T'HH:mm:ss.SSSSSS",
}
#: Distinct values tracked per partition: all of them count while fewer than ~750 are seen.
DISTINCT_CAPACITY = 1000
#: A Theta sketch of 2^12 entries counts up to 4,096 distinct values exactly; beyond, its
#: estimate has a relative standard error of about 1.6%.
DEFAULT_THETA_LG_K = 12


def as_text(value: Column) -> Column:
    """A struct value as JSON text that tells distinct values apart (timestamps to the
    microsecond), for counting or deduplicating it."""
    return F.to_json(value, _JSON_OPTIONS)


def _order(entry: Sequence[object]) -> tuple[object, ...]:
    ordering = entry[0]
    return tuple(ordering) if isinstance(ordering, list | tuple) else (ordering,)


def _safe_order(ordering: object) -> object:
    """A struct ordering (a Row) as a list of its values, so it sorts as a tuple."""
    return [json_safe(v) for v in ordering] if isinstance(ordering, tuple) else json_safe(ordering)


def _safe_value(value: object) -> object:
    """A struct value (a Row) as a dict of its fields."""
    as_dict = getattr(value, "asDict", None)
    return json_safe(as_dict(recursive=True) if as_dict else value)


@state_kind("bottom_k")
@dataclass(frozen=True)
class BottomKState:
    """Up to `k` (ordering, value) entries with the smallest orderings, JSON-safe. Merging keeps
    the k smallest of both; with `distinct`, an entry seen on both sides counts once."""

    k: int
    entries: tuple[tuple[object, object], ...] = ()
    distinct: bool = False

    def merge(self, other: BottomKState) -> BottomKState:
        pool = [*self.entries, *other.entries]
        if self.distinct:
            pool = list({json.dumps(e, sort_keys=True): e for e in pool}.values())
        k = min(self.k, other.k)
        return BottomKState(k, tuple(sorted(pool, key=_order)[:k]), self.distinct)


def hashable_columns(schema: StructType) -> list[str]:
    """Top-level columns Spark can hash (maps and variants cannot be, even nested)."""

    def ok(dtype: DataType) -> bool:
        if isinstance(dtype, MapType | VariantType):
            return False
        if isinstance(dtype, StructType):
            return all(ok(f.dataType) for f in dtype.fields)
        element = getattr(dtype, "elementType", None)
        return element is None or ok(element)

    return [f.name for f in schema.fields if ok(f.dataType)]


class _Sample(ScanShareableAnalyzer):
    instance_name: str
    k: int
    entity_kind: ClassVar[Entity] = Entity.DATASET
    distinct: ClassVar[bool] = False

    @property
    def instance(self) -> str:
        return self.instance_name

    def state_from_aggregates(self, values: Sequence[object]) -> BottomKState:
        entries = [(_safe_order(e[0]), _safe_value(e[1])) for e in values[0] or ()]  # type: ignore[attr-defined]
        return BottomKState(self.k, tuple(sorted(entries, key=_order)[: self.k]), self.distinct)

    def zero_state(self) -> BottomKState:
        return BottomKState(self.k, (), self.distinct)

    def compute_value(self, state: BottomKState) -> dict[str, object]:  # type: ignore[override]
        return {"entries": [list(e) for e in state.entries]}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.instance_name!r})"


@dataclass(frozen=True, repr=False)
class BottomK(_Sample):
    """The `k` values with the smallest `ordering` among rows where it is not NULL (all of them
    when fewer): with a hash as ordering, a deterministic sample. Identified by `instance_name`."""

    instance_name: str
    value: Column = field(compare=False, hash=False)
    ordering: Column = field(compare=False, hash=False)
    k: int = 20

    def aggregations(self, schema: StructType) -> list[Column]:
        entry = F.struct(self.ordering.alias("o"), self.value.alias("v"))
        return [F.min_by(entry, self.ordering, self.k)]


@dataclass(frozen=True, repr=False)
class DistinctBottomK(_Sample):
    """Up to `k` distinct values of `value` (a struct of type `value_type`) among rows where
    `rank` (a boolean) is not NULL; FALSE ranks first, then the value's hash. Every distinct value
    is considered while fewer than ~750 are seen (per partition); beyond that, the k come from
    the most frequent ones. Identified by `instance_name`."""

    instance_name: str
    value: Column = field(compare=False, hash=False)
    rank: Column = field(compare=False, hash=False)
    value_type: StructType = field(compare=False, hash=False)
    k: int = 100
    distinct: ClassVar[bool] = True

    def aggregations(self, schema: StructType) -> list[Column]:
        flag = F.when(self.rank, F.lit("1")).otherwise(F.lit("0"))
        text = F.concat(flag, as_text(self.value))
        seen = F.call_function(
            "approx_top_k",
            F.when(self.rank.isNotNull(), text),
            F.lit(DISTINCT_CAPACITY),
            F.lit(DISTINCT_CAPACITY),
        )
        items = F.filter(F.transform(seen, lambda x: x["item"]), lambda s: s.isNotNull())
        ranked = F.array_sort(
            F.transform(
                items,
                lambda s: F.struct(
                    F.substring(s, 1, 1).alias("excused"),
                    F.xxhash64(s).alias("hash"),
                    s.alias("text"),
                ),
            )
        )
        return [
            F.transform(
                F.slice(ranked, 1, self.k),
                lambda r: F.struct(
                    F.struct((r["excused"] == "1").alias("excused"), r["hash"].alias("hash")).alias(
                        "o"
                    ),
                    F.from_json(
                        F.substring(r["text"], 2, 1 << 30), self.value_type, _JSON_OPTIONS
                    ).alias("v"),
                ),
            )
        ]


@state_kind("theta")
@dataclass(frozen=True)
class ThetaState:
    """A serialized compact Theta sketch: the distinct values' hashes while they fit (an exact
    count), a uniform sample of them beyond. Merged in Python (a Theta union), so distinct counts
    add up over partitions without Spark."""

    sketch: bytes
    lg_k: int = DEFAULT_THETA_LG_K

    @classmethod
    def zero(cls, lg_k: int = DEFAULT_THETA_LG_K) -> ThetaState:
        return cls(ds.update_theta_sketch(lg_k).compact().serialize(), lg_k)

    def merge(self, other: ThetaState) -> ThetaState:
        lg_k = max(self.lg_k, other.lg_k)
        union = ds.theta_union(lg_k)
        union.update(self.load())
        union.update(other.load())
        return ThetaState(union.get_result().serialize(), lg_k)

    def load(self) -> ds.compact_theta_sketch:
        return ds.compact_theta_sketch.deserialize(self.sketch)

    def count(self) -> tuple[int, bool]:
        """The number of distinct values, and whether it is exact (else estimated)."""
        sketch = self.load()
        exact = not sketch.is_estimation_mode()
        return math.floor(sketch.get_estimate() + 0.5), exact


@dataclass(frozen=True, repr=False)
class DistinctCount(ScanShareableAnalyzer):
    """How many distinct values `value` (a Column; NULL rows are not counted) takes, in the shared
    scan: exact up to 2^lg_k distinct values, estimated beyond. The value is `{"count": n,
    "exact": bool}`. Identified by `instance_name`."""

    instance_name: str
    value: Column = field(compare=False, hash=False)
    lg_k: int = DEFAULT_THETA_LG_K
    entity_kind: ClassVar[Entity] = Entity.DATASET

    @property
    def instance(self) -> str:
        return self.instance_name

    def aggregations(self, schema: StructType) -> list[Column]:
        return [F.theta_sketch_agg(self.value, self.lg_k)]

    def state_from_aggregates(self, values: Sequence[object]) -> ThetaState:
        if values[0] is None:
            return ThetaState.zero(self.lg_k)
        return ThetaState(bytes(values[0]), self.lg_k)  # type: ignore[call-overload]

    def zero_state(self) -> ThetaState:
        return ThetaState.zero(self.lg_k)

    def compute_value(self, state: ThetaState) -> dict[str, object]:  # type: ignore[override]
        count, exact = state.count()
        return {"count": count, "exact": exact}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.instance_name!r})"
