"""Configuration from `dq.toml`: receivers, escalation policies, silences and where failing rows
are published (every key: docs/configuration.md). Secrets never live in the file: receivers name
the environment variables that hold them, and a secret-looking key is refused. A key the loader
does not know is refused by name, so a typo never passes silently."""

from __future__ import annotations

import datetime as dt
import difflib
import inspect
import os
import urllib.parse
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from alerting.grouping import DEFAULT_GROUP_BY, GROUP_FIELDS
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
from checkers.dq_toml import DqTomlError, read_document
from checkers.env_secrets import env_name
from checkers.levels import AlertLevel

SECRET_KEYS = {"token", "password", "routing_key", "api_key", "secret"}
#: Receivers every run has, whether dq.toml declares them or not (scheduling.settings).
BUILT_IN_RECEIVERS = ("console", "file")
RECEIVER_TYPES: dict[str, Callable[..., Receiver]] = {
    "slack": SlackReceiver,
    "email": EmailReceiver,
    "pagerduty": PagerDutyReceiver,
    "console": ConsoleReceiver,
    "file": FileReceiver,
}
#: Constructor arguments a file cannot give (the name is the table's, Python objects).
_NOT_IN_FILE = {"name", "ssl_context"}

#: `checks` is the list of packages holding the checks (read with DQ_CHECKS, checkers.shipping).
TOP_LEVEL_KEYS = ("checks", "receivers", "policies", "silences", "failing_rows", "retention")
POLICY_KEYS = (
    "routes",
    "escalate_after_runs",
    "escalate_after_minutes",
    "repeat_every_minutes",
    "group_by",
)
SILENCE_KEYS = ("check", "starts_at", "ends_at", "comment", "created_by")
FAILING_ROWS_KEYS = ("directory", "base_url")
#: [retention]: days each kind of history is kept (scheduling.retention reads the values).
RETENTION_KEYS = ("runs_days", "incidents_days", "claims_days", "failing_rows_days")
REFERENCE = "docs/configuration.md"


def receiver_options(kind: str) -> tuple[str, ...]:
    """The options of a receiver type in dq.toml besides `type`: its constructor's."""
    parameters = inspect.signature(RECEIVER_TYPES[kind]).parameters
    return tuple(name for name in parameters if name not in _NOT_IN_FILE)


def accepted_keys() -> dict[str, tuple[str, ...]]:
    """Every key dq.toml accepts, by section (the reference documents each of them)."""
    keys = {
        "top level": TOP_LEVEL_KEYS,
        "policies": POLICY_KEYS,
        "silences": SILENCE_KEYS,
        "failing_rows": FAILING_ROWS_KEYS,
        "retention": RETENTION_KEYS,
    }
    for kind in RECEIVER_TYPES:
        keys[f"receivers ({kind})"] = ("type", *receiver_options(kind))
    return keys


@dataclass(frozen=True)
class AlertingConfig:
    receivers: dict[str, Receiver] = field(default_factory=dict)
    policies: dict[str, EscalationPolicy] = field(default_factory=dict)
    silences: tuple[Silence, ...] = ()
    #: [failing_rows]: where failing rows are written (absolute) and the URL publishing it.
    failing_rows_directory: Path | None = None
    failing_rows_url: str | None = None

    def policy(self, name: str = "default") -> EscalationPolicy:
        try:
            return self.policies[name]
        except KeyError:
            raise KeyError(f"no escalation policy {name!r} in the configuration") from None


def _refuse_unknown(
    keys: Iterable[str], allowed: Sequence[str], where: str, at: tuple[str | int, ...] = ()
) -> None:
    for key in keys:
        if key not in allowed:
            close = difflib.get_close_matches(key, allowed, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise DqTomlError(
                f"dq.toml: unknown key {key!r} in {where}; {hint}"
                f"it takes {', '.join(allowed) or 'no options'} (see {REFERENCE})",
                key=(*at, key),
            )


def _table(value: object, where: str, at: tuple[str | int, ...] = ()) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise DqTomlError(f"dq.toml: {where} must be a table, got {value!r:.60}", key=at)
    return value


#: What a receiver option's annotation asks of its value in the file.
_OPTION_TYPES: dict[str, tuple[str, Callable[[object], bool]]] = {
    "str": ("a string", lambda v: isinstance(v, str)),
    "int": ("a whole number", lambda v: isinstance(v, int) and not isinstance(v, bool)),
    "float": ("a number", lambda v: isinstance(v, int | float) and not isinstance(v, bool)),
    "bool": ("true or false", lambda v: isinstance(v, bool)),
    "Sequence[str]": ("a list of strings", lambda v: _strings(v)),
}


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _refuse_wrong_types(kind: str, options: Mapping[str, Any], at: tuple[str, ...]) -> None:
    """Each option of the right type for its receiver (as its constructor annotates it)."""
    parameters = inspect.signature(RECEIVER_TYPES[kind]).parameters
    for key, value in options.items():
        annotation = str(parameters[key].annotation).split(" | ")[0]
        wanted, accepts = _OPTION_TYPES.get(annotation, ("", lambda _: True))
        if not accepts(value):
            raise DqTomlError(
                f"dq.toml: {key} in [receivers.{at[-1]}] must be {wanted}, got {value!r:.60}",
                key=(*at, key),
            )


def _receiver(name: str, options: Mapping[str, Any]) -> Receiver:
    at = ("receivers", name)
    secrets = SECRET_KEYS & set(options)
    if secrets:
        raise DqTomlError(
            f"receiver {name!r} has {sorted(secrets)} in the file: secrets come from the "
            f"environment, use {sorted(s + '_env' for s in secrets)}",
            key=(*at, sorted(secrets)[0]),
        )
    for key, value in options.items():
        if key.endswith("_env"):  # checked before any receiver sees it: refused, never echoed
            try:
                env_name(key, value, owner=f"receiver {name!r} in dq.toml", environ=os.environ)
            except ValueError as exc:
                raise DqTomlError(str(exc), key=(*at, key)) from None
    values = dict(options)
    kind = values.pop("type", None)
    if kind is None:
        raise DqTomlError(
            f"receiver {name!r} needs a type, one of {sorted(RECEIVER_TYPES)}", key=at
        )
    if kind not in RECEIVER_TYPES:
        raise DqTomlError(
            f"unknown receiver type {kind!r}; choose from {sorted(RECEIVER_TYPES)}",
            key=(*at, "type"),
        )
    _refuse_unknown(values, receiver_options(kind), f"[receivers.{name}] (type {kind!r})", at)
    _refuse_wrong_types(kind, values, at)
    try:
        return RECEIVER_TYPES[kind](name, **values)
    except TypeError as exc:  # a required option missing
        raise DqTomlError(f"dq.toml: [receivers.{name}]: {exc}", key=at) from None


def _level(value: object, where: str, at: tuple[str, ...]) -> AlertLevel:
    try:
        return AlertLevel[str(value).upper()]
    except KeyError:
        raise DqTomlError(
            f"dq.toml: {where} needs a level (WARNING, ERROR or CRITICAL), got {value!r}", key=at
        ) from None


def _policy(name: str, options: Mapping[str, Any], receivers: Iterable[str]) -> EscalationPolicy:
    at = ("policies", name)
    _refuse_unknown(options, POLICY_KEYS, f"[policies.{name}]", at)
    known = set(receivers)
    routes = {}
    for receiver, level in dict(_table(options.get("routes", {}), "routes", at)).items():
        if receiver not in known:
            raise DqTomlError(
                f"policy {name!r} routes to unknown receiver {receiver!r}: declare it as "
                f"[receivers.{receiver}], or use one of {sorted(known)} (console and file "
                f"always exist; slack, email and pagerduty once their environment is set)",
                key=(*at, "routes"),
            )
        routes[receiver] = _level(level, f"[policies.{name}] routes.{receiver}", (*at, "routes"))
    for key in POLICY_KEYS[1:4]:
        value = options.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise DqTomlError(
                f"dq.toml: {key} in [policies.{name}] must be a number, got {value!r:.60}",
                key=(*at, key),
            )

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
        group_by=_group_by(name, options.get("group_by", list(DEFAULT_GROUP_BY))),
    )


def _group_by(policy: str, value: object) -> tuple[str, ...]:
    if not isinstance(value, list) or any(v not in GROUP_FIELDS for v in value):
        raise DqTomlError(
            f"[policies.{policy}] group_by takes a list of {', '.join(GROUP_FIELDS)}, "
            f'e.g. group_by = ["owner"]; got {value!r}',
            key=("policies", policy, "group_by"),
        )
    return tuple(value)


def _silence(options: Mapping[str, Any], at: tuple[str | int, ...] = ()) -> Silence:
    _refuse_unknown(options, SILENCE_KEYS, "[[silences]]", at)
    missing = [k for k in ("check", "starts_at", "ends_at") if k not in options]
    if missing:
        raise DqTomlError(f"dq.toml: a [[silences]] entry needs {', '.join(missing)}", key=at)
    return Silence(
        options["check"],
        _aware(options["starts_at"]),
        _aware(options["ends_at"]),
        options.get("comment", ""),
        options.get("created_by", ""),
    )


def http_url(value: object, refusal: str) -> str:
    """`value` as an http(s) URL without its trailing slash; anything else is a ValueError
    saying `refusal` and what was given."""
    text = str(value).strip()
    parts = urllib.parse.urlsplit(text)
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        raise ValueError(f"{refusal}, got {text!r}")
    return text.rstrip("/")


def published_url(value: object, where: str) -> str:
    """A base URL failing rows are published under: http or https."""
    return http_url(
        value,
        f"{where} must be an http(s) URL where the failing-rows directory is published, "
        "e.g. https://dq.example.com/failing",
    )


def load_config(
    path: str | Path, *, known_receivers: Iterable[str] = BUILT_IN_RECEIVERS
) -> AlertingConfig:
    """The configuration in `path`. Policies may route to its receivers and to
    `known_receivers` (those every run has, and those the environment switched on)."""
    document = read_document(path, required=True)
    return config_from_document(document, known_receivers=known_receivers)


def config_from_document(
    data: Mapping[str, object], *, known_receivers: Iterable[str] = BUILT_IN_RECEIVERS
) -> AlertingConfig:
    """`load_config` of a dq.toml already parsed (scheduling.config reads it once per run)."""
    _refuse_unknown(data, TOP_LEVEL_KEYS, "the top level")
    declared = _table(data.get("receivers", {}), "[receivers]", ("receivers",))
    receivers = {
        n: _receiver(n, _table(o, f"[receivers.{n}]", ("receivers", n)))
        for n, o in declared.items()
    }
    names = [*known_receivers, *receivers]
    policies = {
        n: _policy(n, _table(o, f"[policies.{n}]", ("policies", n)), names)
        for n, o in _table(data.get("policies", {}), "[policies]", ("policies",)).items()
    }
    entries = data.get("silences", [])
    if not isinstance(entries, list):
        raise DqTomlError(
            "dq.toml: silences is a list of tables: write each as [[silences]]", key=("silences",)
        )
    silences = tuple(
        _silence(_table(s, "[[silences]]", ("silences", i)), ("silences", i))
        for i, s in enumerate(entries)
    )
    rows = _table(data.get("failing_rows", {}), "[failing_rows]", ("failing_rows",))
    _refuse_unknown(rows, FAILING_ROWS_KEYS, "[failing_rows]", ("failing_rows",))
    directory = Path(str(rows["directory"])).resolve() if "directory" in rows else None
    url = _failing_rows_url(rows)
    kept = _table(data.get("retention", {}), "[retention]", ("retention",))
    _refuse_unknown(kept, RETENTION_KEYS, "[retention]", ("retention",))
    return AlertingConfig(receivers, policies, silences, directory, url)


def _failing_rows_url(rows: Mapping[str, Any]) -> str | None:
    if "base_url" not in rows:
        return None
    try:
        return published_url(rows["base_url"], "[failing_rows] base_url")
    except ValueError as exc:
        raise DqTomlError(str(exc), key=("failing_rows", "base_url")) from None


def _aware(value: dt.datetime | str) -> dt.datetime:
    moment = value if isinstance(value, dt.datetime) else dt.datetime.fromisoformat(value)
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)
