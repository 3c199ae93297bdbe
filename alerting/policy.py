"""Escalation policies: which receivers hear about which level, how an incident that stays open
escalates over time, and how often a still-failing incident is repeated."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field

from alerting.grouping import DEFAULT_GROUP_BY, GROUP_FIELDS
from alerting.model import Incident
from checkers.levels import AlertLevel


@dataclass(frozen=True)
class EscalationPolicy:
    """`routes` maps receiver names to the lowest level they hear about.

    An incident still open after `escalate_after_runs` failing runs, or `escalate_after` since it
    opened, moves up one level (each further multiple moves it up again, up to CRITICAL).
    `repeat_every` re-notifies a still-failing incident whose level did not change (zero: every
    run; None: never).

    >>> EscalationPolicy(routes={"slack-dq": AlertLevel.WARNING, "pagerduty": AlertLevel.ERROR},
    ...                  escalate_after_runs=4, repeat_every=dt.timedelta(hours=4))
    """

    routes: Mapping[str, AlertLevel] = field(default_factory=dict)
    escalate_after_runs: int | None = None
    escalate_after: dt.timedelta | None = None
    repeat_every: dt.timedelta | None = dt.timedelta(hours=4)
    #: Incidents opening in one run with the same values of these (owner, tag, source) go out
    #: as one notification per receiver (alerting.grouping); by default the checks over one
    #: source; empty: each on its own.
    group_by: tuple[str, ...] = DEFAULT_GROUP_BY

    def __post_init__(self) -> None:
        if isinstance(self.group_by, str) or any(g not in GROUP_FIELDS for g in self.group_by):
            raise ValueError(
                f"group_by takes a list of {', '.join(GROUP_FIELDS)}: {self.group_by!r}"
            )
        object.__setattr__(self, "group_by", tuple(self.group_by))
        if self.escalate_after_runs is not None and self.escalate_after_runs < 1:
            raise ValueError("escalate_after_runs must be at least 1")
        if self.escalate_after is not None and self.escalate_after <= dt.timedelta(0):
            raise ValueError("escalate_after must be positive")
        for name, level in self.routes.items():
            if not isinstance(level, AlertLevel) or level is AlertLevel.OK:
                raise ValueError(f"route {name!r} needs a level from WARNING to CRITICAL")
        object.__setattr__(self, "routes", dict(self.routes))

    def __hash__(self) -> int:
        return hash(
            (
                tuple(sorted(self.routes.items())),
                self.escalate_after_runs,
                self.escalate_after,
                self.repeat_every,
                self.group_by,
            )
        )

    def effective_level(self, incident: Incident, now: dt.datetime) -> AlertLevel:
        """The incident's level after escalation over runs and time."""
        steps = 0
        if self.escalate_after_runs:
            steps = max(steps, (incident.failing_runs - 1) // self.escalate_after_runs)
        if self.escalate_after:
            steps = max(steps, int((now - incident.opened_at) / self.escalate_after))
        return AlertLevel(min(incident.level + steps, AlertLevel.CRITICAL))

    def receivers_for(self, level: AlertLevel) -> list[str]:
        return [name for name, lowest in self.routes.items() if level >= lowest]
