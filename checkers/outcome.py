"""`CheckOutcome`: the result of one run of one check, as alerting, storage and reports see it.
Plain data (no Spark), serialisable to JSON."""

from __future__ import annotations

import datetime as dt
import decimal
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from enum import StrEnum

from checkers.levels import AlertLevel

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


@dataclass(frozen=True)
class CheckOutcome:
    """One run of one check. `failing`/`total` count elements (rows, keys, constraints...);
    `unexcused` are failing elements that no KnownBroken key excuses."""

    check: str
    status: Status
    level: AlertLevel = AlertLevel.OK
    failing: int = 0
    total: int = 0
    unexcused: int = 0
    error: str | None = None
    description: str = ""
    tolerance: str = ""
    sample: tuple[SampleRow, ...] = ()
    failing_keys: tuple[object, ...] = ()
    metrics: Mapping[str, object] = field(default_factory=dict)
    started_at: dt.datetime | None = None
    finished_at: dt.datetime | None = None
    timings: Mapping[str, float] = field(default_factory=dict)
    #: What the run read: `rows_read`; incremental checks add `partitions_read` (new or changed)
    #: and `partitions` (in scope).
    reading: Mapping[str, int] = field(default_factory=dict)
    scope: str = ""
    owner: str = ""
    tags: tuple[str, ...] = ()

    @property
    def share(self) -> float:
        """Share of failing elements (0 when there were none)."""
        return self.failing / self.total if self.total else 0.0

    @property
    def alerting(self) -> bool:
        """Whether this outcome should open or update an incident."""
        return self.status in (Status.FAILED, Status.ERROR)

    def with_times(self, started_at: dt.datetime, finished_at: dt.datetime) -> CheckOutcome:
        return replace(self, started_at=started_at, finished_at=finished_at)

    def summary(self) -> str:
        """One line for logs and CLIs."""
        if self.status is Status.ERROR:
            return f"{self.check}: ERROR ({self.error})"
        if self.status is Status.PASSED:
            return f"{self.check}: passed ({self.total} checked)"
        counts = f"{self.failing}/{self.total} failing ({self.share:.2%})"
        if self.status is Status.TOLERATED:
            return f"{self.check}: tolerated, {counts}, within {self.tolerance}"
        return f"{self.check}: {self.level.name}, {counts}"

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, AlertLevel):
                value = value.name
            out[f.name] = json_safe(value)
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
