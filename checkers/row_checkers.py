"""Row-predicate checkers over one dataset: every row must satisfy a predicate, or every pair of
rows `offset` apart (in order) must. Both compile to engine counts, so many of them over the same
DataFrame cost one aggregation pass."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any, cast

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.types import StructField, StructType

from checkers._keys import key_columns, quoted
from checkers.checker import (
    DEFAULT_KEY_LIMIT,
    Checker,
    CheckerPlan,
    CheckerResult,
    excused_condition,
    first_error,
    rows_to_dicts,
)
from checkers.metrics import Analyzer, CountWhere, Metric, Size
from checkers.metrics.samples import (
    BottomK,
    DistinctBottomK,
    DistinctCount,
    as_text,
    hashable_columns,
)
from checkers.outcome import json_safe
from checkers.predicates import Answer, Predicate, as_answer, failing, problem_error
from checkers.sample_times import readable, readable_type
from checkers.tolerances import KnownBroken

_ids = itertools.count(1)


class RowPredicateChecker(Checker):
    """Template for checkers that judge rows of one DataFrame: subclasses give the `frame` whose
    rows are the elements and the `condition` each must satisfy (NULL counts as failing)."""

    name: str

    def __init__(self, *, key: Sequence[str] | str = (), name: str | None = None) -> None:
        self.key = (key,) if isinstance(key, str) else tuple(key)
        self.name = f"{name or type(self).__name__}#{next(_ids)}"

    def frame(self) -> DataFrame:
        raise NotImplementedError

    def condition(self, frame: DataFrame) -> Column:
        raise NotImplementedError

    def answer(self, frame: DataFrame) -> Answer:
        """The condition and, for a Python predicate, each row's problem (see Answer)."""
        return Answer(self.condition(frame))

    def breakdown(self, frame: DataFrame) -> dict[str, Column]:
        """Named conditions counted beside the failures (reported as metrics)."""
        return {}

    def plan(self, excused: Sequence[KnownBroken] = ()) -> CheckerPlan:
        frame = self.frame()
        keys = key_columns(frame, self.key) if self.key else []  # a missing key is an ERROR
        answer = self.answer(frame)
        fails = failing(answer.condition)
        excuse = excused_condition(excused, self.key, frame)
        unexcused = fails if excuse is None else fails & ~excuse
        counted = {"failing": fails, **({"unexcused": unexcused} if excuse is not None else {})}
        counted.update(self.breakdown(frame))
        analyzers: dict[str, Analyzer] = {
            name: CountWhere(f"{self.name}:{name}", cond) for name, cond in counted.items()
        }
        analyzers["rows"] = Size()
        keys_read = [c.alias(f"__key_{n}") for n, c in enumerate(keys)]
        samples = _FailingSamples(self.name, frame, fails, excuse, keys_read, self.sample_size)
        problems = _problems(self.name, answer.problem)

        def finish(metrics: Mapping[Analyzer, Metric]) -> CheckerResult:
            error = first_error(metrics, [*analyzers.values(), *problems])
            if error is not None:
                return CheckerResult.failed_to_run(_without_analyzer_name(error))
            if problems and (found := int(metrics[problems[0]].value)):  # type: ignore[arg-type]
                listed = metrics[problems[1]].value
                entries = cast(list[Any], listed["entries"]) if isinstance(listed, dict) else []
                example = str(entries[0][1]) if entries else None
                return CheckerResult.failed_to_run(problem_error(found, example))
            values = {name: int(metrics[a].value) for name, a in analyzers.items()}  # type: ignore[arg-type]
            values.setdefault("unexcused", values["failing"])
            wanted = unexcused if values["unexcused"] else fails
            only_unexcused = values["unexcused"] > 0
            wanted_count = values["unexcused"] if only_unexcused else values["failing"]

            def fetch(limit: int) -> list[dict[str, object]]:
                rows = samples.rows(metrics, only_unexcused)
                if limit <= samples.k or len(rows) >= wanted_count:
                    return rows[:limit]  # type: ignore[return-value]
                chosen = frame.filter(wanted).select(samples.row.alias("r")).limit(limit)
                return rows_to_dicts(r["r"] for r in chosen.collect())

            distinct = samples.distinct_keys(metrics, only_unexcused)

            def fetch_keys(limit: int) -> list[object]:
                found = samples.keys(metrics, only_unexcused)
                larger = limit > DEFAULT_KEY_LIMIT and len(found) >= DEFAULT_KEY_LIMIT
                # Beyond ~750 distinct keys in one task the pass's sample may lose some (or all)
                # of them: the distinct count tells, and a query reads them instead.
                lost = distinct is not None and len(found) < min(limit, distinct[0])
                if larger or lost:
                    query = frame.filter(wanted).select(*samples.keys_read).distinct()
                    query = query.orderBy(*[F.col(c) for c in query.columns]).limit(limit)
                    found = [tuple(json_safe(v) for v in r) for r in query.collect()]
                ordered = sorted(found, key=lambda r: tuple(map(_sort_key, r)))[:limit]
                return [r[0] if len(r) == 1 else list(r) for r in ordered]

            return CheckerResult(
                failing=values["failing"],
                total=values["rows"],
                unexcused=values["unexcused"],
                rows=values["rows"],
                metrics=dict(values),
                fetch_sample=fetch,
                fetch_keys=fetch_keys if self.key else None,
                keys_distinct=distinct,
            )

        return CheckerPlan(frame, [*analyzers.values(), *problems, *samples.analyzers], finish)


def _problems(name: str, problem: Column | None) -> list[Analyzer]:
    """How many rows a Python predicate went wrong on, and one of its problems, counted in the
    shared pass: a wrong answer never fails the pass nor restarts a Python worker, so the checks
    sharing the pass stand and nothing is run twice."""
    if problem is None:
        return []
    seen = F.when(problem.isNotNull(), F.xxhash64(problem))
    return [
        CountWhere(f"{name}:problems", problem.isNotNull()),
        BottomK(f"{name}:problem", problem, seen, 1),
    ]


#: Prefix of columns the engine adds to a source (see checkers.parsers.PARTITION_COLUMN).
INTERNAL_PREFIX = "__dq_"
#: Spark's min_by keeps at most this many values.
MAX_IN_PASS = 100_000


class _FailingSamples:
    """A checker's failing rows (all columns) and failing keys, sampled in the shared scan: the
    rows with the smallest hashes (unexcused ones first), up to DEFAULT_KEY_LIMIT distinct keys
    (all of them when fewer fail), and how many distinct keys fail (of unexcused failing rows,
    and of all failing rows when some are excused)."""

    def __init__(
        self,
        name: str,
        frame: DataFrame,
        fails: Column,
        excuse: Column | None,
        keys: Sequence[Column],
        k: int,
    ) -> None:
        self.k = min(k, MAX_IN_PASS)
        excused = F.lit(False) if excuse is None else excuse
        hashed = [F.col(quoted(c)) for c in hashable_columns(frame.schema) if not _internal(c)]
        digest = F.xxhash64(*hashed) if hashed else F.lit(0).cast("long")
        row = F.struct(*[_sampled(f) for f in frame.schema.fields if not _internal(f.name)])
        self.row = row
        ordering = F.when(fails, F.struct(excused.alias("excused"), digest.alias("hash")))
        self.sample = BottomK(f"{name}:sample", row, ordering, self.k) if self.k > 0 else None
        self.analyzers: list[Analyzer] = [self.sample] if self.sample else []
        self.key_sample: DistinctBottomK | None = None
        self.distinct: DistinctCount | None = None
        self.distinct_all: DistinctCount | None = None
        self.keys_read = list(keys)
        if keys:
            value = F.struct(*keys)
            value_type = frame.select(value.alias("key")).schema["key"].dataType
            assert isinstance(value_type, StructType)
            # listed keys as a sample holds them: a timestamp as text with its offset
            self.keys_read = [
                readable(c, f.dataType).alias(f.name)
                for c, f in zip(keys, value_type.fields, strict=True)
            ]
            listed_type = readable_type(value_type)
            assert isinstance(listed_type, StructType)
            rank = F.when(fails, excused)
            self.key_sample = DistinctBottomK(
                f"{name}:keys", F.struct(*self.keys_read), rank, listed_type, DEFAULT_KEY_LIMIT
            )
            self.analyzers.append(self.key_sample)
            text = as_text(value)
            unexcused = fails if excuse is None else fails & ~excuse
            self.distinct = DistinctCount(f"{name}:distinct_keys", F.when(unexcused, text))
            self.analyzers.append(self.distinct)
            if excuse is not None:
                every = DistinctCount(f"{name}:distinct_failing_keys", F.when(fails, text))
                self.distinct_all = every
                self.analyzers.append(every)

    @staticmethod
    def _entries(
        metrics: Mapping[Analyzer, Metric], analyzer: Analyzer, only_unexcused: bool
    ) -> list[object]:
        metric = metrics[analyzer]
        if not metric.ok:
            raise RuntimeError(metric.error)
        entries: list[list[Any]] = metric.value["entries"]  # type: ignore[index,assignment]
        return [v for o, v in entries if not (only_unexcused and o[0])]

    def rows(self, metrics: Mapping[Analyzer, Metric], only_unexcused: bool) -> list[object]:
        return self._entries(metrics, self.sample, only_unexcused) if self.sample else []

    def keys(
        self, metrics: Mapping[Analyzer, Metric], only_unexcused: bool
    ) -> list[tuple[object, ...]]:
        assert self.key_sample is not None
        found = self._entries(metrics, self.key_sample, only_unexcused)
        return [tuple(v.values()) for v in found]  # type: ignore[attr-defined]

    def distinct_keys(
        self, metrics: Mapping[Analyzer, Metric], only_unexcused: bool
    ) -> tuple[int, bool] | None:
        """How many distinct keys the listed ones are drawn from (unexcused failing ones, or all
        failing ones when none is unexcused), and whether that count is exact; None without a
        key or when the count could not be computed."""
        analyzer = self.distinct if only_unexcused else self.distinct_all or self.distinct
        metric = metrics.get(analyzer) if analyzer is not None else None
        if metric is None or not metric.ok:
            return None
        value: dict[str, Any] = metric.value  # type: ignore[assignment]
        return int(value["count"]), bool(value["exact"])


def _sampled(field: StructField) -> Column:
    """A column as a sample holds it: timestamps as text with their offset (sample_times)."""
    return readable(F.col(quoted(field.name)), field.dataType).alias(field.name)


def _internal(column: str) -> bool:
    """Columns the engine adds (the partition of an incremental read): never part of a row."""
    return column.startswith(INTERNAL_PREFIX)


def _sort_key(value: object) -> tuple[bool, bool, float, str]:
    """Orders key values: numbers numerically, then text, NULL last."""
    number = isinstance(value, int | float) and not isinstance(value, bool)
    return (value is None, not number, float(value) if number else 0.0, str(value))  # type: ignore[arg-type]


def _without_analyzer_name(error: str) -> str:
    prefix, _, rest = error.partition("): ")
    return rest if prefix.startswith("CountWhere(") and rest else error


class PredicateSingleDatasetChecker(RowPredicateChecker):
    """Every row of `dataset` must satisfy `predicate` (a Column, a SQL string, or a Python
    function of the row as a dict; the last runs in Python workers and is slower).

    >>> PredicateSingleDatasetChecker(flights, "arr_delay IS NULL OR arr_delay < 600")
    """

    def __init__(
        self,
        dataset: DataFrame,
        predicate: Predicate,
        *,
        key: Sequence[str] | str = (),
        name: str | None = None,
    ) -> None:
        super().__init__(key=key, name=name)
        self.dataset = dataset
        self.predicate = predicate

    def frame(self) -> DataFrame:
        return self.dataset

    def answer(self, frame: DataFrame) -> Answer:
        columns = [c for c in frame.columns if not _internal(c)]
        return as_answer(self.predicate, row_columns=columns)

    def incremental_problem(self, partition_columns: Sequence[str]) -> str | None:
        return None  # each row is judged alone: counts add up over partitions


class OffsetPredicateSingleDatasetChecker(RowPredicateChecker):
    """Rows `offset` apart, in `order_by` order within each `partition_by` group, must satisfy
    `predicate(previous, current)`. In SQL or Columns the two rows are the structs `previous` and
    `current` (`"previous.arr_time <= current.dep_time"`); a Python function gets two dicts. The
    current row's columns are also top-level. The first `offset` rows of a group are not judged.

    >>> OffsetPredicateSingleDatasetChecker(
    ...     flights, "previous.arr_ts <= current.dep_ts",
    ...     order_by=["dep_ts"], partition_by=["tailnum"])
    """

    def __init__(
        self,
        dataset: DataFrame,
        predicate: Predicate,
        *,
        order_by: Sequence[str | Column],
        partition_by: Sequence[str] = (),
        offset: int = 1,
        key: Sequence[str] | str | None = None,
        name: str | None = None,
    ) -> None:
        if offset < 1:
            raise ValueError(f"offset must be at least 1, got {offset}")
        if not order_by:
            raise ValueError(
                "an offset predicate needs order_by: rows apart only mean something in order"
            )
        super().__init__(key=tuple(partition_by) if key is None else key, name=name)
        self.dataset = dataset
        self.predicate = predicate
        self.order_by = list(order_by)
        self.partition_by = list(partition_by)
        self.offset = offset

    def incremental_problem(self, partition_columns: Sequence[str]) -> str | None:
        missing = [c for c in partition_columns if c not in self.partition_by]
        if not missing:
            return None  # rows offset apart never sit in two partitions
        return (
            f"rows {self.offset} apart may sit in two partitions: an incremental offset check "
            f"needs partition_by to include the partition columns {list(partition_columns)} "
            f"(missing {missing})"
        )

    def frame(self) -> DataFrame:
        window = Window.partitionBy(*self.partition_by).orderBy(*self.order_by)
        row = F.struct(*[F.col(quoted(c)) for c in self.dataset.columns if not _internal(c)])
        return self.dataset.select(
            "*",
            row.alias("current"),
            F.lag(row, self.offset).over(window).alias("previous"),
        ).filter(F.col("previous").isNotNull())

    def answer(self, frame: DataFrame) -> Answer:
        return as_answer(self.predicate, struct_arguments=("previous", "current"))
