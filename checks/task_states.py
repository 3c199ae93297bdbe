"""What a check's outcome makes of its Airflow task: a FAILED outcome at or above `fail_at` fails
the task without retry (retrying cannot change the data), an ERROR outcome (the check could not be
evaluated: a source outage, a bad definition) fails it with retries, anything else succeeds.
Globally from DQ_TASK_FAILS_AT (warning, error, critical or never; default error) and
DQ_TASK_FAILS_ON_ERROR (1 or 0; default 1), read by scheduling.config; per check with
`task_states = TaskStates(...)`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from checkers.levels import AlertLevel

NEVER = "never"


class TaskVerdict(StrEnum):
    SUCCEED = "succeed"
    FAIL = "fail"  # without retry
    RETRY = "retry"  # fail; Airflow retries while it has tries left


@dataclass(frozen=True)
class TaskStates:
    """How a check's outcomes map onto its task's state.

    task_states = TaskStates(fail_at=AlertLevel.CRITICAL)  # ERROR-level failures stay green
    task_states = TaskStates(fail_at=None)                 # failures never fail the task
    """

    fail_at: AlertLevel | None = AlertLevel.ERROR
    fail_on_error: bool = True

    def __post_init__(self) -> None:
        if self.fail_at is not None and not isinstance(self.fail_at, AlertLevel):
            raise TypeError(f"fail_at must be an AlertLevel or None, got {self.fail_at!r}")
        if self.fail_at is AlertLevel.OK:
            raise ValueError("fail_at=AlertLevel.OK would fail passing checks; use WARNING")
        if not isinstance(self.fail_on_error, bool):
            raise TypeError(f"fail_on_error must be True or False, got {self.fail_on_error!r}")

    def verdict(self, status: str, level: str) -> TaskVerdict:
        """The task's fate for an outcome's status (passed, tolerated, failed, error) and
        level name (OK, WARNING, ERROR, CRITICAL)."""
        if status == "error":
            return TaskVerdict.RETRY if self.fail_on_error else TaskVerdict.SUCCEED
        if status == "failed" and self.fail_at is not None and AlertLevel[level] >= self.fail_at:
            return TaskVerdict.FAIL
        return TaskVerdict.SUCCEED

    def spec(self) -> dict[str, object]:
        """As JSON for the manifest."""
        fail_at = self.fail_at.name.lower() if self.fail_at is not None else NEVER
        return {"fail_at": fail_at, "fail_on_error": self.fail_on_error}

    @classmethod
    def from_spec(cls, spec: Mapping[str, object]) -> TaskStates:
        return cls(_level(str(spec["fail_at"])), bool(spec["fail_on_error"]))

    @classmethod
    def parse(cls, fail_at: str, fail_on_error: bool) -> TaskStates:
        """From the name of `fail_at` (warning, error, critical or never); KeyError for
        another name."""
        return cls(_level(fail_at), fail_on_error)


def _level(name: str) -> AlertLevel | None:
    return None if name.lower() == NEVER else AlertLevel[name.upper()]
