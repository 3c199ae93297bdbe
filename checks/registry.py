"""The registry of checks: every `QualityCheck` subclass adds itself when its class is defined.
Registration is pure (no Spark, no I/O), so importing the checks package is cheap."""

from __future__ import annotations

import importlib
import pkgutil
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from checks.base import QualityCheck

_REGISTRY: dict[str, type[QualityCheck]] = {}


def register(check: type[QualityCheck]) -> None:
    existing = _REGISTRY.get(check.name)
    same_definition = existing is not None and (
        (existing.__module__, existing.__qualname__) == (check.__module__, check.__qualname__)
    )
    if existing is not None and not same_definition:
        raise ValueError(
            f"two checks are named {check.name!r}: {existing.__module__}.{existing.__qualname__} "
            f"and {check.__module__}.{check.__qualname__}; set `name = ...` on one of them"
        )
    _REGISTRY[check.name] = check


def registered() -> dict[str, type[QualityCheck]]:
    """Every registered check by name."""
    return dict(sorted(_REGISTRY.items()))


def get(name: str) -> type[QualityCheck]:
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY)) or "none"
        raise KeyError(f"no check named {name!r} (registered: {known})") from None


def discover(package: str) -> dict[str, type[QualityCheck]]:
    """Import every module under `package` (checks register themselves) and return the checks
    defined there."""
    module = importlib.import_module(package)
    for info in pkgutil.walk_packages(getattr(module, "__path__", []), prefix=f"{package}."):
        importlib.import_module(info.name)
    return {
        name: check
        for name, check in registered().items()
        if check.__module__ == package or check.__module__.startswith(f"{package}.")
    }
