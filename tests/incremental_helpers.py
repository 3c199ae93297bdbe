"""What the tests of incremental checks share: a partition store over a migrated database, a day's
Parquet partition, an incremental check over one source, and the comparison of incremental
outcomes with a recomputation from scratch."""

from __future__ import annotations

import datetime as dt
import os
import sys
import types
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import sqlalchemy as sa

from checkers import MetricChecker
from checkers.checker import Checker
from checkers.metrics import Check, CheckLevel
from checkers.outcome import CheckOutcome
from checkers.parsers import Parser
from checks import QualityCheck
from checks.incremental import Incremental
from scheduling.drift import differences
from scheduling.schema import migrate
from scheduling.tick.evaluate import evaluate_checks
from scheduling.tick.partition_store import PartitionStore


def partition_store(root: Path, url: str | None = None) -> PartitionStore:
    """A store of partition states in `root`, its rows in `url` (a SQLite file in `root` unless
    given), with every migration applied."""
    engine = sa.create_engine(url or f"sqlite:///{root / 'dq.db'}")
    migrate(engine)
    return PartitionStore(engine, root / "states")


def write_day(root: Path, day: dt.date, frame: pd.DataFrame, *, mtime: int | None = None) -> Path:
    """`frame` as the one Parquet file of the Hive partition `day=...` under `root`."""
    directory = root / f"day={day.isoformat()}"
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / "part-0.parquet"
    table = pa.Table.from_pandas(frame, preserve_index=False)
    pq.write_table(table, target, coerce_timestamps="us", allow_truncated_timestamps=True)
    if mtime is not None:
        os.utime(target, (mtime, mtime))
    return target


def _caller_module() -> str:
    """The first module outside this one on the stack: the test that defines the check."""
    frame = sys._getframe(1)
    while frame.f_globals["__name__"] == __name__ and frame.f_back is not None:
        frame = frame.f_back
    return str(frame.f_globals["__name__"])


def incremental_check(
    name: str, source: Parser, checker: Callable[[Any], Checker], **attributes: object
) -> type[QualityCheck]:
    """An unregistered incremental check `name` reading `source`, whose checker is
    `checker(data)`; `attributes` set the rest (tolerance, alert_level, ...). The class belongs
    to the calling test module, whose source its definition digest covers, as a class written
    there would."""
    module = _caller_module()

    def body(namespace: dict[str, Any]) -> None:
        namespace.update(name=name, parser=source, incremental=Incremental(), **attributes)
        namespace["__module__"] = module
        namespace["checker"] = lambda self, data: checker(data)

    title = "".join(word.title() for word in name.split("_"))
    return types.new_class(title, (QualityCheck,), {"register": False}, body)


def incremental_metrics(
    name: str, source: Parser, constraints: Callable[[Check], Check], **attributes: object
) -> type[QualityCheck]:
    """An incremental check of one metric suite: `constraints` add theirs to an ERROR-level
    `Check` named after the check."""
    return incremental_check(
        name,
        source,
        lambda data: MetricChecker(data, [constraints(Check(CheckLevel.ERROR, name))]),
        **attributes,
    )


def same_as_scratch(
    spark, checks: Sequence[type[QualityCheck]], outcomes: Sequence[CheckOutcome], now: dt.datetime
) -> list[CheckOutcome]:
    """Asserts that the incremental `outcomes` of `checks` have no error and do not differ from a
    recomputation from scratch; returns the recomputed outcomes."""
    scratch = evaluate_checks(list(checks), spark=spark, now=now, full=True)
    for mine, full in zip(outcomes, scratch, strict=True):
        assert mine.error is None, mine.error
        assert differences(mine, full) == [], mine.check
    return scratch
