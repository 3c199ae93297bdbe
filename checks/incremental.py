"""`Incremental`: a check over partitioned data that reads only new and changed partitions. Each
run merges the stored states of the partitions it has already read with the states of the ones
that are new or changed since, so its cost follows what changed, not the size of the dataset.

    class FlightsHaveDestinations(QualityCheck):
        parser = ParquetParser("lake/flights", partitioning=HivePartitions(("day",)))
        incremental = Incremental(within=dt.timedelta(days=365))
        ...
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from checkers.parsers import Partition


@dataclass(frozen=True)
class Incremental:
    """Which partitions the outcome covers: all of them (the default), the `last` N (by the
    time each names, else by key), or those whose time lies `within` the period before the
    run's `now` (partitions later than `now` are left out)."""

    last: int | None = None
    within: dt.timedelta | None = None

    def __post_init__(self) -> None:
        if self.last is not None and self.within is not None:
            raise ValueError("Incremental takes last= or within=, not both")
        if self.last is not None and (isinstance(self.last, bool) or self.last < 1):
            raise ValueError(f"Incremental(last=...) must be a whole number >= 1: {self.last!r}")
        if self.within is not None and (
            not isinstance(self.within, dt.timedelta) or self.within <= dt.timedelta(0)
        ):
            raise ValueError(
                f"Incremental(within=...) must be a positive timedelta, e.g. "
                f"dt.timedelta(days=30): {self.within!r}"
            )

    def describe(self) -> str:
        if self.last is not None:
            return f"the last {self.last} partitions"
        if self.within is not None:
            return f"partitions within {self.within} before the run"
        return "all partitions"

    def in_scope(self, found: Sequence[Partition], now: dt.datetime) -> list[Partition]:
        """The partitions the outcome covers, in order."""
        ordered = sorted(found, key=partition_order)
        if self.last is not None:
            return ordered[-self.last :]
        if self.within is not None:
            undated = [p.key for p in ordered if p.ts is None]
            if undated:
                raise ValueError(
                    f"Incremental(within=...) needs partitions that name a time; "
                    f"{undated[0]!r} does not (use last= instead)"
                )
            start = now - self.within
            return [p for p in ordered if p.ts is not None and start <= p.ts < now]
        return ordered


def partition_order(partition: Partition) -> tuple[bool, dt.datetime, str]:
    """By time when the partition names one, else by key (keys sort after dated ones)."""
    return (
        partition.ts is None,
        partition.ts or dt.datetime.min.replace(tzinfo=dt.UTC),
        partition.key,
    )
