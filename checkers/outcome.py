"""`CheckOutcome`: the result of one run of one check, as alerting, storage and reports see it.
Plain data (no Spark), serialisable to JSON."""

from __future__ import annotations

import datetime as dt
import decimal
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from enum import StrEnum
from typing import TYPE_CHECKING

from checkers.levels import AlertLevel
from checkers.sample_limits import (
    CELL_CHARS,
    ERROR_CHARS,
    STORED,
    bounded_rows,
    bounded_value,
    cut_text,
)

if TYPE_CHECKING:
    from checkers.metrics.agreement import Agreement

#: One failing element, column name -> JSON-safe value.
SampleRow = dict[str, object]


class Status(StrEnum):
    """PASSED: nothing failed. TOLERATED: failures the tolerance accepts. FAILED: failures beyond
    it (see `level`). ERROR: the check could not be evaluated (see `error`)."""

    PASSED = "passed"
    TOLERATED = "tolerated"
    FAILED = "failed"
    ERROR = "error"


def json_safe(value: object) -> object:
    """A value as JSON can hold it: datetimes as ISO text, decimals as float, bytes as hex."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, bytes | bytearray):
        return bytes(value).hex()
    if isinstance(value, Mapping):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [json_safe(v) for v in value]
    if hasattr(value, "asDict"):  # a Spark Row nested in a sample
        return json_safe(value.asDict(recursive=True))
    return str(value)


#: `CheckOutcome.unexcused` not given: every failing element is unexcused.
UNEXCUSED_ALL = -1


@dataclass(frozen=True)
class CheckOutcome:
    """One run of one check. `failing`/`total` count elements (rows, keys, constraints...);
    `unexcused` are failing elements that no KnownBroken key excuses (all of them when not
    given: an outcome built by hand excuses nothing)."""

    check: str
    status: Status
    level: AlertLevel = AlertLevel.OK
    #: Which threshold set `level`, in words: "ERROR: 12 failing > warning threshold 10, <= error
    #: threshold 100" (`checkers.levels.level_reason`); empty when no level is set.
    level_reason: str = ""
    failing: int = 0
    total: int = 0
    unexcused: int = UNEXCUSED_ALL
    error: str | None = None
    description: str = ""
    tolerance: str = ""
    sample: tuple[SampleRow, ...] = ()
    failing_keys: tuple[object, ...] = ()
    #: How many distinct keys `failing_keys` (at most 100) are drawn from; None when the check
    #: has no key (or the count is unknown). `failing_keys_approximate`: estimated (a sketch
    #: counts exactly up to 4,096 distinct keys).
    failing_keys_distinct: int | None = None
    failing_keys_approximate: bool = False
    metrics: Mapping[str, object] = field(default_factory=dict)
    #: For a metric answered by a sketch, the values a recomputation from scratch may give
    #: (`checkers.metrics.agreement`); the drift guard compares by them. Not recorded.
    agreements: Mapping[str, Agreement] = field(
        default_factory=dict, compare=False, metadata={"recorded": False}
    )
    started_at: dt.datetime | None = None
    finished_at: dt.datetime | None = None
    timings: Mapping[str, float] = field(default_factory=dict)
    #: What the run read: `rows_read`; incremental checks add `partitions_read` (new or changed)
    #: and `partitions` (in scope).
    reading: Mapping[str, int] = field(default_factory=dict)
    #: Where each metric in `metrics` came from: `scan`, `metadata` (file statistics, the
    #: schema) or `states` (stored by earlier runs), by name; `reading["bytes_not_read"]` says
    #: what metadata answers spared.
    metric_sources: Mapping[str, str] = field(default_factory=dict)
    scope: str = ""
    #: Where the run wrote its failing sample for alerts to link to: a POSIX path relative to
    #: the failing-rows directory ("" when none; `alerting.failing_rows.failing_rows_link`).
    failing_rows: str = ""
    owner: str = ""
    tags: tuple[str, ...] = ()
    #: Evaluations in this run: 2 when an ERROR was evaluated again before it was recorded.
    attempts: int = 1

    def __post_init__(self) -> None:
        if self.unexcused == UNEXCUSED_ALL:
            object.__setattr__(self, "unexcused", self.failing)

    @property
    def share(self) -> float:
        """Share of failing elements (0 when there were none)."""
        return self.failing / self.total if self.total else 0.0

    @property
    def alerting(self) -> bool:
        """Whether this outcome should open or update an incident."""
        return self.status in (Status.FAILED, Status.ERROR)

    @property
    def excused(self) -> int:
        """Failing elements excused by KnownBroken keys (the tolerance and levels judge the
        others, `unexcused`)."""
        return max(self.failing - self.unexcused, 0)

    @property
    def unexcused_share(self) -> float:
        """Share of unexcused failing elements: what tolerances and alert levels judge."""
        return self.unexcused / self.total if self.total else 0.0

    def describe_failing_keys(self) -> str:
        """How many distinct keys fail against how many are listed, e.g. "721 distinct keys
        (first 100 listed)"; empty when the count is unknown."""
        count = self.failing_keys_distinct
        if count is None:
            return ""
        listed = len(self.failing_keys)
        noun = "distinct key" if count == 1 else "distinct keys"
        about = "about " if self.failing_keys_approximate else ""
        notes = ["estimated"] if self.failing_keys_approximate else []
        if not listed and count:
            notes.append("not listed")
        elif listed < count or self.failing_keys_approximate:
            notes.append(f"first {listed} listed")
        return f"{about}{count:,} {noun}" + (f" ({'; '.join(notes)})" if notes else "")

    def with_times(self, started_at: dt.datetime, finished_at: dt.datetime) -> CheckOutcome:
        return replace(self, started_at=started_at, finished_at=finished_at)

    def summary(self) -> str:
        """One line for logs: "c: FAILED (level ERROR), 2/16 failing (12.50%)" or "c: could not
        run: <reason>"; a level is never printed where it could be read as a status. An outcome
        evaluated again after an ERROR says so."""
        retried = f" (attempt {self.attempts}: retried after an ERROR)" if self.attempts > 1 else ""
        return self._summary() + retried

    def _summary(self) -> str:
        if self.status is Status.ERROR:
            return f"{self.check}: could not run: {self.error}"
        if self.status is Status.PASSED:
            return f"{self.check}: passed ({self.total} checked)"
        counts = f"{self.failing}/{self.total} failing ({self.share:.2%})"
        if self.status is Status.TOLERATED:
            return f"{self.check}: tolerated, {counts}, within {self.tolerance}"
        return f"{self.check}: FAILED (level {self.level.name}), {counts}"

    def to_dict(self) -> dict[str, object]:
        """The outcome as JSON holds it, bounded (checkers.sample_limits): cells and failing
        keys cut at CELL_CHARS, the sample at SAMPLE_BYTES, the error at ERROR_CHARS; NaN and
        infinities (samples, keys, metrics) as the texts "NaN", "Infinity", "-Infinity"."""
        out: dict[str, object] = {}
        for f in fields(self):
            if not f.metadata.get("recorded", True):
                continue
            value = getattr(self, f.name)
            if isinstance(value, AlertLevel):
                value = value.name
            out[f.name] = json_safe(value)
        out["sample"] = bounded_rows(out["sample"], STORED)  # type: ignore[arg-type]
        out["failing_keys"] = bounded_value(out["failing_keys"], CELL_CHARS)
        if self.error is not None:
            out["error"] = cut_text(self.error, ERROR_CHARS)
        # a metric or reading may be NaN or infinite (a mean over infinities): as text, so every
        # file and payload holding the outcome stays JSON
        out["metrics"] = bounded_value(out["metrics"], None)
        out["reading"] = bounded_value(out["reading"], None)
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> CheckOutcome:
        values = dict(data)
        values["status"] = Status(str(values["status"]))
        values["level"] = AlertLevel[str(values.get("level", "OK"))]
        for name in ("started_at", "finished_at"):
            if values.get(name):
                values[name] = dt.datetime.fromisoformat(str(values[name]))
        values["sample"] = tuple(values.get("sample") or ())  # type: ignore[arg-type]
        values["tags"] = tuple(values.get("tags") or ())  # type: ignore[arg-type]
        values["failing_keys"] = tuple(
            tuple(k) if isinstance(k, list) else k
            for k in values.get("failing_keys") or ()  # type: ignore[attr-defined]
        )
        return cls(**values)  # type: ignore[arg-type]

    @classmethod
    def from_json(cls, text: str) -> CheckOutcome:
        return cls.from_dict(json.loads(text))
