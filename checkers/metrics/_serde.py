"""State serialization: a registry keyed by each state's kind, so a new metric touches one
module."""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

#: Bump when a stored state's payload changes meaning; loading another version is a clear error.
STATE_FORMAT_VERSION = 1

T = TypeVar("T")
_KINDS: dict[str, type] = {}


class StateFormatError(Exception):
    """A stored state was written in a format this version cannot read."""


def state_kind(kind: str) -> Callable[[type[T]], type[T]]:
    """Class decorator: register a state dataclass under a stable kind name."""

    def register(cls: type[T]) -> type[T]:
        if kind in _KINDS and _KINDS[kind] is not cls:
            raise ValueError(f"state kind {kind!r} is registered twice")
        _KINDS[kind] = cls
        cls.state_kind = kind  # type: ignore[attr-defined]
        return cls

    return register


def encode_state(state: object) -> dict[str, Any]:
    """A JSON-ready dict for a state (bytes as base64). Frequency states encode their location."""
    kind = getattr(type(state), "state_kind", None)
    if kind is None:
        raise TypeError(f"{type(state).__name__} is not a registered state")
    custom = getattr(state, "to_payload", None)
    if custom is not None:
        payload = custom()
    else:
        payload = {}
        for field in dataclasses.fields(state):  # type: ignore[arg-type]
            value = getattr(state, field.name)
            if isinstance(value, bytes):
                value = {"b64": base64.b64encode(value).decode("ascii")}
            payload[field.name] = value
    return {"format_version": STATE_FORMAT_VERSION, "kind": kind, "payload": payload}


def decode_state(record: dict[str, Any]) -> object:
    version = record.get("format_version")
    if version != STATE_FORMAT_VERSION:
        raise StateFormatError(
            f"stored state has format version {version!r}, this dq-checkers reads version "
            f"{STATE_FORMAT_VERSION}; recompute the states of this dataset (run the analysis "
            f"again for its partitions) or read them with the version that wrote them"
        )
    cls = _KINDS.get(record.get("kind", ""))
    if cls is None:
        raise StateFormatError(f"unknown state kind {record.get('kind')!r}")
    payload = record["payload"]
    custom = getattr(cls, "from_payload", None)
    if custom is not None:
        return custom(payload)
    values = {
        k: base64.b64decode(v["b64"]) if isinstance(v, dict) and "b64" in v else v
        for k, v in payload.items()
    }
    return cls(**values)
