"""Planning incremental checks: which of a source's partitions a run reads (new, changed, or all
when the check's definition changed), the source of just those (`ChangedPartitions`) and the
checker's plan over it. Evaluating the plan: scheduling/tick/incremental.py."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType

from checkers.checker import (
    CONFIGURATION_ERROR,
    Checker,
    CheckerPlan,
)
from checkers.deadlines import within
from checkers.errors import describe_failure
from checkers.metrics import (
    Analyzer,
    Size,
)
from checkers.metrics.state_stores import LoadedState
from checkers.parsers import (
    PARTITION_COLUMN,
    DataFiles,
    Parser,
    Partition,
    PartitionColumn,
    SourceError,
)
from checkers.tolerances import Tolerance
from checks.base import QualityCheck
from scheduling.tick.digests import accepted_digests
from scheduling.tick.partition_store import Known, PartitionStore

States = Mapping[Analyzer, LoadedState]


@dataclass(frozen=True)
class ChangedPartitions(Parser):
    """The new and changed partitions of `base`, loaded like any source (deadline, sharing)."""

    base: Parser
    chosen: tuple[Partition, ...]
    deadline_s: float | None = None
    #: The source's schema as stored by an earlier run: with no partition to read, the data is
    #: an empty frame of that schema, built without touching the source.
    data_schema: str | None = None

    def read(self, spark: SparkSession) -> DataFrame:
        if not self.chosen and self.data_schema:
            return empty_frame(spark, self.data_schema)
        return self.base.read_partitions(spark, list(self.chosen))

    def load(self, spark: SparkSession) -> DataFrame:
        try:
            return self.read(spark)  # read_partitions keeps the promised schema itself
        except SourceError:
            raise
        except Exception as exc:
            raise SourceError(f"cannot read {self.describe()}: {describe_failure(exc)}") from exc

    def describe(self) -> str:
        return f"{self.base.describe()} ({len(self.chosen)} new or changed partitions)"


@dataclass
class PartitionPlan:
    """One incremental check's partitions in this run."""

    check: type[QualityCheck]
    base: Parser
    scope: list[Partition]
    changed: list[Partition]
    stored: dict[str, dict[Analyzer, LoadedState]]
    dropped: list[str]
    definition: str
    columns: tuple[str, ...]
    data_schema: str | None = None
    reader: ChangedPartitions = field(init=False)

    def __post_init__(self) -> None:
        self.reader = ChangedPartitions(
            self.base, tuple(self.changed), self.base.deadline_s, self.data_schema
        )


def empty_frame(spark: SparkSession, data_schema: str) -> DataFrame:
    return spark.createDataFrame([], StructType.fromJson(json.loads(data_schema)))


def partition_columns(parser: Parser, found: Sequence[Partition]) -> tuple[str, ...]:
    """The data columns that tell partitions apart."""
    if isinstance(parser.partitioning, PartitionColumn):
        return (parser.partitioning.column,)
    if isinstance(parser.partitioning, DataFiles):
        return ()  # a row's file is no column of the data
    names: dict[str, None] = {}
    for partition in found:
        for segment in partition.key.split("/"):
            names.setdefault(segment.partition("=")[0])
    return tuple(names)


def stable_checker(checker: Checker, check: type[QualityCheck]) -> Checker:
    """Name the checker's counted conditions after the check: stored states keep their keys
    from run to run (and stay apart from other checks' in a shared pass)."""
    if hasattr(checker, "name"):
        checker.name = check.name
    return checker


def incremental_problem(checker: object, columns: Sequence[str]) -> str | None:
    if not isinstance(checker, Checker):
        return None  # reported as a configuration error by the plan
    return checker.incremental_problem(tuple(columns))


def prepare(
    check: type[QualityCheck],
    instance: QualityCheck,
    sources: Mapping[str, Parser],
    spark: SparkSession,
    store: PartitionStore | None,
    *,
    deadline_s: float,
) -> PartitionPlan | str:
    """What this run reads for `check`, or why it cannot run (an error message). Without a
    store, every partition in scope is read (a recomputation from scratch)."""
    assert check.incremental is not None
    if list(sources) != ["data"]:
        return f"{CONFIGURATION_ERROR}an incremental check reads one source, not {sorted(sources)}"
    parser = sources["data"]
    if parser.partitioning is None:
        return (
            f"{CONFIGURATION_ERROR}an incremental check needs a partitioned source: give "
            f"{type(parser).__name__} partitioning=HivePartitions(...) or PartitionColumn(...)"
        )
    try:
        with within(parser.deadline_s or deadline_s):
            found = parser.partitions(spark)
    except SourceError as exc:
        return str(exc)
    except Exception as exc:
        return f"cannot list the partitions of {parser.describe()}: {describe_failure(exc)}"
    try:
        scope = check.incremental.in_scope(found, instance.now)
    except ValueError as exc:
        return f"{CONFIGURATION_ERROR}{exc}"
    columns = partition_columns(parser, found)
    if store is None:
        return PartitionPlan(check, parser, scope, list(scope), {}, [], "", columns)
    known = store.known(check.name)
    data_schema = _latest_schema(known.values())
    try:
        data = (
            empty_frame(spark, data_schema)
            if data_schema
            else parser.read_partitions(spark, scope[:1])
        )
    except SourceError as exc:
        return str(exc)
    except Exception as exc:
        return f"cannot read {parser.describe()}: {describe_failure(exc)}"
    probe = plan_for(check, instance, data, columns)
    if isinstance(probe, str):
        return probe
    accepted = accepted_digests(check, parser, probe)
    definition = accepted[0]  # what new states are stored under
    unchanged = [
        p.key
        for p in scope
        if (k := known.get(p.key)) and k.fingerprint == p.fingerprint and k.definition in accepted
    ]
    wanted = stored_analyzers(probe)
    needed = [a for a in wanted if a != Size() or a in probe.analyzers]
    stored = store.load(check.name, unchanged, wanted)
    stored = {k: s for k, s in stored.items() if all(a in s for a in needed)}
    changed = [p for p in scope if p.key not in stored]
    in_scope = {p.key for p in scope}
    dropped = [k for k in known if k not in in_scope]
    return PartitionPlan(
        check, parser, scope, changed, stored, dropped, definition, columns, data_schema
    )


def _latest_schema(known: Iterable[Known]) -> str | None:
    dated = [(k.updated_at, k.data_schema) for k in known if k.data_schema and k.updated_at]
    return max(dated, key=lambda pair: pair[0])[1] if dated else None


def plan_for(
    check: type[QualityCheck], instance: QualityCheck, frame: DataFrame, columns: Sequence[str]
) -> CheckerPlan | str:
    """The checker's plan over `frame`, or why the check cannot run incrementally."""
    try:
        checker = instance.checker(frame)
    except Exception as exc:
        return f"building the checker failed: {type(exc).__name__}: {exc}"
    if problem := incremental_problem(checker, columns):
        return f"{CONFIGURATION_ERROR}{problem}"
    if not isinstance(checker, Checker):
        return f"{CONFIGURATION_ERROR}checker() returned {type(checker).__name__}, not a Checker"
    checker.sample_size = check.sample_size
    stable_checker(checker, check)
    tolerance: Tolerance = check.tolerance
    try:
        plan = checker.plan(tolerance.known_broken())
    except Exception as exc:
        return f"{CONFIGURATION_ERROR}{exc}"
    if plan.frame is None or PARTITION_COLUMN not in plan.frame.columns:
        return (
            f"{CONFIGURATION_ERROR}the checker's data lost the column {PARTITION_COLUMN}, which "
            "tells partitions apart: keep every column (select('*', ...)) in an incremental check"
        )
    return plan


def stored_analyzers(plan: CheckerPlan) -> list[Analyzer]:
    """The analyzers whose states an incremental run keeps per partition for `plan`: its own,
    the row count, and a segmented checker's per-segment ones."""
    segments = plan.segmented.analyzers if plan.segmented else []
    return list(dict.fromkeys([*plan.analyzers, Size(), *segments]))
