"""Counting Spark applications, jobs and source reads across processes with Spark's own event
logs. A SPARK_CONF_DIR whose spark-defaults.conf enables the event log is handed to every process
(`EventLogs.env()`); a classic driver started by `SparkSession.builder...getOrCreate()` (ours:
checkers/spark.py) reads it through spark-submit, unless its builder sets the same keys.

Each driver writes one JSON-lines file per application. A *source read* is one SQL execution whose
physical plan scans the source: `SparkListenerSQLExecutionStart` and every
`SparkListenerSQLAdaptiveExecutionUpdate` of that execution carry a `sparkPlanInfo` tree; a file
scan node (`Scan parquet`, `Scan csv`, ...) names its roots in `metadata.Location`
(`InMemoryFileIndex(1 paths)[file:/...]`), another scan by its node name (`Scan
JDBCRelation(...)`). A source scanned twice in one execution (a self-join) counts once; a scan
under `InMemoryTableScan` (a cached plan) is not a read, since the plan of the execution that
fills the cache looks like every later one.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

SQL_START = "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart"
SQL_ADAPTIVE = "org.apache.spark.sql.execution.ui.SparkListenerSQLAdaptiveExecutionUpdate"
#: Not sources: in-memory data, generated ranges, cached plans (see the module docstring).
NOT_SOURCES = (
    "LocalTableScan",
    "Range",
    "InMemoryTableScan",
    "Scan ExistingRDD",
    "Scan OneRowRelation",
)


def spark_defaults(log_dir: Path) -> dict[str, str]:
    return {
        "spark.eventLog.enabled": "true",
        "spark.eventLog.dir": log_dir.resolve().as_uri(),
        "spark.eventLog.compress": "false",
        "spark.eventLog.rolling.enabled": "false",
        # Plan metadata (file locations) is cut at 100 characters by default; paths are longer.
        "spark.sql.maxMetadataStringLength": "100000",
    }


@dataclass(frozen=True)
class Application:
    """One Spark application's event log, summarised."""

    app_id: str
    name: str
    jobs: int
    scans: Mapping[int, frozenset[str]]  # SQL execution id -> sources its plans scan

    @property
    def reads(self) -> Counter[str]:
        """Per source, how many SQL executions scanned it."""
        return Counter(source for sources in self.scans.values() for source in sources)


@dataclass(frozen=True)
class EventLogs:
    """A SPARK_CONF_DIR that turns the event log on, and the directory the logs land in."""

    conf_dir: Path
    log_dir: Path

    @classmethod
    def create(cls, root: str | os.PathLike[str], **extra: str) -> EventLogs:
        """Under `root`: conf/spark-defaults.conf and events/; `extra` adds Spark properties."""
        logs = cls(Path(root) / "conf", Path(root) / "events")
        logs.conf_dir.mkdir(parents=True, exist_ok=True)
        logs.log_dir.mkdir(parents=True, exist_ok=True)
        properties = {**spark_defaults(logs.log_dir), **extra}
        text = "".join(f"{key} {value}\n" for key, value in properties.items())
        (logs.conf_dir / "spark-defaults.conf").write_text(text)
        return logs

    def env(self) -> dict[str, str]:
        """For every process that may start a Spark driver."""
        return {"SPARK_CONF_DIR": str(self.conf_dir)}

    def applications(self) -> list[Application]:
        """Every application logged so far (still running ones too), oldest first."""
        files = sorted(
            (p for p in self.log_dir.iterdir() if p.is_file()), key=lambda p: p.stat().st_mtime
        )
        return [read_application(p) for p in files]

    def reads(self) -> Counter[str]:
        """Per source, SQL executions that scanned it, over all applications."""
        return total_reads(self.applications())


def total_reads(applications: Iterable[Application]) -> Counter[str]:
    total: Counter[str] = Counter()
    for application in applications:
        total.update(application.reads)
    return total


def reads_of(reads: Mapping[str, int], path: str | os.PathLike[str]) -> int:
    """Reads of the file or directory `path`: scans of it or of anything under it."""
    root = os.path.abspath(path)  # as Spark qualifies it: symbolic links stay
    return sum(n for source, n in reads.items() if source == root or source.startswith(root + "/"))


def read_application(path: Path) -> Application:
    app_id, name, jobs = path.name.removesuffix(".inprogress"), "", 0
    scans: dict[int, set[str]] = {}
    for event in _events(path):
        kind = event.get("Event")
        if kind == "SparkListenerApplicationStart":
            app_id, name = str(event.get("App ID", app_id)), str(event.get("App Name", ""))
        elif kind == "SparkListenerJobStart":
            jobs += 1
        elif kind in (SQL_START, SQL_ADAPTIVE):
            found = scans.setdefault(int(event["executionId"]), set())
            found.update(scanned_sources(event["sparkPlanInfo"]))
    return Application(app_id, name, jobs, {k: frozenset(v) for k, v in scans.items() if v})


def scanned_sources(plan: Mapping[str, Any]) -> set[str]:
    """Sources the scan nodes of one `sparkPlanInfo` tree read (not below a cached plan)."""
    name = str(plan.get("nodeName", "")).strip()
    if name.startswith(NOT_SOURCES):
        return set()
    found: set[str] = set()
    if "Scan" in name.split(" ")[0]:
        location = (plan.get("metadata") or {}).get("Location")
        found.update(_roots(str(location)) if location else {name})
    for child in plan.get("children") or ():
        found |= scanned_sources(child)
    return found


def _roots(location: str) -> set[str]:
    """`InMemoryFileIndex(2 paths)[file:/a, file:/b]` -> {"/a", "/b"}; other schemes stay."""
    inside = location[location.find("[") + 1 : location.rfind("]")]
    roots = {root.strip() for root in inside.split(", ") if root.strip()}
    return {urlparse(r).path if r.startswith("file:") else r for r in roots}


def _events(path: Path) -> Iterator[dict[str, Any]]:
    with path.open() as lines:
        for line in lines:
            try:
                yield json.loads(line)
            except ValueError:  # the last line of a log still being written
                continue
