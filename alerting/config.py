"""Alerting configuration from `dq.toml`: receivers, escalation policies and silences (format
in docs/alerting.md). Secrets never live in the file: receivers name the environment variables
that hold them, and a secret-looking key is refused."""

from __future__ import annotations

import datetime as dt
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from alerting.mutes import Silence
from alerting.policy import EscalationPolicy
from alerting.receivers import (
    ConsoleReceiver,
    EmailReceiver,
    FileReceiver,
    PagerDutyReceiver,
    Receiver,
    SlackReceiver,
)
from checkers.env_secrets import env_name
from checkers.levels import AlertLevel

SECRET_KEYS = {"token", "password", "routing_key", "api_key", "secret"}


@dataclass(frozen=True)
class AlertingConfig:
    receivers: dict[str, Receiver] = field(default_factory=dict)
    policies: dict[str, EscalationPolicy] = field(default_factory=dict)
    silences: tuple[Silence, ...] = ()

    def policy(self, name: str = "default") -> EscalationPolicy:
        try:
            return self.policies[name]
        except KeyError:
            raise KeyError(f"no escalation policy {name!r} in the configuration") from None


def _build(kind: str) -> Callable[..., Receiver]:
    builders: dict[str, Callable[..., Receiver]] = {
        "slack": SlackReceiver,
        "email": EmailReceiver,
        "pagerduty": PagerDutyReceiver,
        "console": ConsoleReceiver,
        "file": FileReceiver,
    }
    if kind not in builders:
        raise ValueError(f"unknown receiver type {kind!r}; choose from {sorted(builders)}")
    return builders[kind]


def _receiver(name: str, options: Mapping[str, Any]) -> Receiver:
    secrets = SECRET_KEYS & set(options)
    if secrets:
        raise ValueError(
            f"receiver {name!r} has {sorted(secrets)} in the file: secrets come from the "
            f"environment, use {sorted(s + '_env' for s in secrets)}"
        )
    for key, value in options.items():
        if key.endswith("_env"):  # checked before any receiver sees it: refused, never echoed
            env_name(key, value, owner=f"receiver {name!r} in dq.toml")
    values = dict(options)
    kind = values.pop("type", None)
    if kind is None:
        raise ValueError(f"receiver {name!r} needs a type")
    return _build(kind)(name, **values)


def _policy(
    name: str, options: Mapping[str, Any], receivers: Mapping[str, Receiver]
) -> EscalationPolicy:
    routes = {}
    for receiver, level in dict(options.get("routes", {})).items():
        if receiver not in receivers:
            raise ValueError(f"policy {name!r} routes to unknown receiver {receiver!r}")
        routes[receiver] = AlertLevel[str(level).upper()]

    def minutes(key: str) -> dt.timedelta | None:
        value = options.get(key)
        return None if value is None else dt.timedelta(minutes=float(value))

    return EscalationPolicy(
        routes=routes,
        escalate_after_runs=options.get("escalate_after_runs"),
        escalate_after=minutes("escalate_after_minutes"),
        repeat_every=minutes("repeat_every_minutes")
        if "repeat_every_minutes" in options
        else dt.timedelta(hours=4),
    )


def load_config(path: str | Path) -> AlertingConfig:
    with Path(path).open("rb") as handle:
        data = tomllib.load(handle)
    receivers = {n: _receiver(n, o) for n, o in data.get("receivers", {}).items()}
    policies = {n: _policy(n, o, receivers) for n, o in data.get("policies", {}).items()}
    silences = tuple(
        Silence(
            s["check"],
            _aware(s["starts_at"]),
            _aware(s["ends_at"]),
            s.get("comment", ""),
            s.get("created_by", ""),
        )
        for s in data.get("silences", [])
    )
    return AlertingConfig(receivers, policies, silences)


def _aware(value: dt.datetime | str) -> dt.datetime:
    moment = value if isinstance(value, dt.datetime) else dt.datetime.fromisoformat(value)
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)
