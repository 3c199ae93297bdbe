"""A table's history as a monitor sees it, from metadata alone: its arrivals (commits, or the
partitions it holds when they name periods), the rows each added, and how its newest schema
differs from the one before."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Arrival:
    """One load: when (a commit's time, or the start of the period a partition holds) and the
    rows it added (None when the metadata does not say)."""

    at: dt.datetime
    rows: int | None


@dataclass(frozen=True)
class TableHistory:
    """One table under a root. `by_partition`: arrivals are partitions named for periods (a
    partition of day D is complete at the end of D), else commits. `schema_changes` says how
    the newest schema differs from the previous one, a line per column; `problem` why the
    history could not be read (the monitor reports it: an unreadable table never passes)."""

    name: str
    location: str
    arrivals: tuple[Arrival, ...] = ()
    by_partition: bool = False
    schema_changes: tuple[str, ...] = ()
    problem: str | None = None


class TableRoot(Protocol):
    """Where a monitor finds its tables, listed anew on every run (tables added later are
    watched from their first run): a lake path, an Iceberg namespace."""

    def describe(self) -> str:
        """The root for people ("tables under s3a://lake")."""

    def histories(self) -> list[TableHistory]:
        """Every table under the root with its history (metadata only: no data file read)."""
