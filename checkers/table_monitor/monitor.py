"""`TableMonitor`: every table under a root watched from metadata alone (no data file read, no
Spark job): freshness against each table's learned cadence, the rows of its newest load
against its history, and schema changes. Elements are tables."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence

from checkers.checker import Checker, CheckerPlan, CheckerResult
from checkers.metrics import Analyzer, Metric
from checkers.table_monitor.cadence import learn_cadence, volume_problem
from checkers.table_monitor.history import TableHistory, TableRoot
from checkers.tolerances import KnownBroken

WATCHES = ("freshness", "volume", "schema")


def findings(
    table: TableHistory,
    now: dt.datetime,
    *,
    watch: Sequence[str] = WATCHES,
    late_after: float = 1.5,
    volume_tolerance: float = 0.3,
) -> list[dict[str, object]]:
    """What is wrong with one table at `now`, a row per problem (none: it is fine, or still
    learning its cadence)."""
    if table.problem is not None:
        return [{"table": table.name, "problem": "unreadable", "detail": table.problem}]
    found: list[dict[str, object]] = []
    cadence = learn_cadence(
        [a.at for a in table.arrivals], by_partition=table.by_partition, late_after=late_after
    )
    if "freshness" in watch and cadence is not None and cadence.late(now):
        newest = max(a.at for a in table.arrivals)
        found.append(
            {
                "table": table.name,
                "problem": "late",
                "detail": f"newest load {newest:%Y-%m-%d %H:%M}, the next one expected "
                f"{_span(cadence.expected_gap)} later; late since {cadence.due:%Y-%m-%d %H:%M}",
            }
        )
    if "volume" in watch:
        reason = volume_problem([a.rows for a in table.arrivals], tolerance=volume_tolerance)
        if reason is not None:
            found.append({"table": table.name, "problem": "volume", "detail": reason})
    if "schema" in watch and table.schema_changes:
        detail = "; ".join(table.schema_changes)
        found.append({"table": table.name, "problem": "schema", "detail": detail})
    return found


def _span(gap: dt.timedelta) -> str:
    hours = gap.total_seconds() / 3600
    if hours >= 24:
        return f"{hours / 24:g} day{'' if hours == 24 else 's'}"
    return f"{hours:g} hour{'' if hours == 1 else 's'}"


class TableMonitor(Checker):
    """Every table under `root` (a `LakeRoot`, an `IcebergNamespace`), listed anew each run:
    late against its learned cadence (`late_after` expected gaps without a load, weekday
    seasonality included), a newest load off its history by more than `volume_tolerance`,
    or a changed schema. Reads metadata only. Elements are tables, keyed by name, so
    `KnownBroken(["sales/legacy"])` excuses one.

    >>> TableMonitor(LakeRoot("s3://lake/gold"), now=self.now, watch=("freshness", "volume"))
    """

    key = ("table",)

    def __init__(
        self,
        root: TableRoot,
        *,
        now: dt.datetime,
        watch: Sequence[str] = WATCHES,
        late_after: float = 1.5,
        volume_tolerance: float = 0.3,
    ) -> None:
        unknown = set(watch) - set(WATCHES)
        if unknown:
            raise ValueError(f"TableMonitor watches {WATCHES}, not {sorted(unknown)}")
        if late_after <= 1:
            raise ValueError("late_after must exceed 1 (expected gaps before a table is late)")
        self.root, self.now, self.watch = root, now, tuple(watch)
        self.late_after, self.volume_tolerance = late_after, volume_tolerance

    def plan(self, excused: Sequence[KnownBroken] = ()) -> CheckerPlan:
        names = {str(k[0] if isinstance(k, tuple) else k) for e in excused for k in e.keys}

        def finish(metrics: Mapping[Analyzer, Metric]) -> CheckerResult:
            tables = self.root.histories()
            if not tables:  # a wrong root, never a pass
                return CheckerResult.failed_to_run(f"no tables found: {self.root.describe()}")
            rows = [
                row
                for table in tables
                for row in findings(
                    table,
                    self.now,
                    watch=self.watch,
                    late_after=self.late_after,
                    volume_tolerance=self.volume_tolerance,
                )
            ]
            failing = sorted({str(r["table"]) for r in rows})
            unexcused = [t for t in failing if t not in names]
            keys: list[object] = list(unexcused or failing)
            ordered = sorted(rows, key=lambda r: (r["table"] in names, str(r["table"])))
            problems = [str(r["problem"]) for r in rows]
            return CheckerResult(
                failing=len(failing),
                total=len(tables),
                unexcused=len(unexcused),
                # no data row is read; `rows` stays unknown (0 would judge an empty dataset)
                reading={"rows_read": 0},
                metrics={"tables": len(tables), **{p: problems.count(p) for p in set(problems)}},
                metric_sources={"tables": "metadata"},
                fetch_sample=lambda limit: ordered[:limit],
                fetch_keys=lambda limit: keys[:limit],
            )

        return CheckerPlan(None, [], finish)
