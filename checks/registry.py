"""The registry of checks: every `QualityCheck` subclass adds itself when its class is defined.
Registration is pure (no Spark, no I/O), so importing the checks package is cheap. Defined
directly, a broken check raises; while `discover_all` imports a package, it becomes a problem."""

from __future__ import annotations

import contextlib
import importlib
import logging
import pkgutil
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from types import TracebackType
from typing import TYPE_CHECKING

from checkers.check_packages import apart
from checks.definition import CheckDefinitionError
from checks.problems import DefinitionProblem, for_class, for_import_failure
from checks.unloaded import unloaded_checks

if TYPE_CHECKING:
    from checks.base import QualityCheck

_REGISTRY: dict[str, type[QualityCheck]] = {}
#: Problems found while collecting, by module; kept while the module stays imported, so a second
#: discovery (the scheduler's next tick) still reports them.
_PROBLEMS: dict[str, list[DefinitionProblem]] = {}
_collecting = 0
_log = logging.getLogger(__name__)


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


class defining:
    """Around a check's validation and registration: while discovery collects, an error becomes
    the check's problem (and the class is not registered); otherwise it propagates."""

    def __init__(self, check: type) -> None:
        self.check = check

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool:
        if exc is None or not _collecting or not isinstance(exc, Exception):
            return False
        reason = "; ".join(exc.problems) if isinstance(exc, CheckDefinitionError) else str(exc)
        problem = for_class(self.check, reason)
        _PROBLEMS.setdefault(problem.module, []).append(problem)
        return True


@contextlib.contextmanager
def collecting() -> Iterator[None]:
    """Definition errors of checks defined inside become problems instead of exceptions."""
    global _collecting
    _collecting += 1
    try:
        yield
    finally:
        _collecting -= 1


def registered() -> dict[str, type[QualityCheck]]:
    """Every registered check by name."""
    return dict(sorted(_REGISTRY.items()))


def get(name: str) -> type[QualityCheck]:
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY)) or "none"
        raise KeyError(f"no check named {name!r} (registered: {known})") from None


@dataclass(frozen=True)
class Discovery:
    """What discovery found: the checks that can run, by name, and the problems of those that
    cannot (each named after its check, or `module:<module>` for a module that did not import).
    A problem's name never shadows a good check's or another problem's."""

    checks: dict[str, type[QualityCheck]]
    problems: tuple[DefinitionProblem, ...]
    packages: tuple[str, ...] = ()  # where discovery looked

    def problem(self, name: str) -> DefinitionProblem | None:
        return next((p for p in self.problems if p.name == name), None)

    def missing(self, name: str) -> DefinitionProblem:
        """The problem of a check asked for by name (by a manifest) that was not found: it may
        live in a module that failed to import, or have been renamed or removed."""
        failed = [p.module for p in self.problems if p.import_failed]
        reason = f"no check named {name!r} was loaded"
        if failed:
            reason += f"; modules that failed to import: {', '.join(dict.fromkeys(failed))}"
        reason += "; if it was renamed or removed, run `dq manifest` to refresh the DAG's list"
        if self.packages:
            reason += (
                f"; the check packages here are {', '.join(self.packages)} (DQ_CHECKS, or "
                "`checks` in dq.toml)"
            )
        return DefinitionProblem(name=name, module="", qualname="", reason=reason)


def _import(name: str) -> object | None:
    """Import module `name`, collecting its problems; None when it fails."""
    if name not in sys.modules:
        _PROBLEMS.pop(name, None)  # it runs again: its problems are found again
    try:
        return importlib.import_module(name)
    except (Exception, SystemExit) as exc:  # SyntaxError, ImportError, a raising constructor...
        _PROBLEMS[name] = [
            *_PROBLEMS.get(name, []),  # checks refused before the import stopped
            for_import_failure(name, exc),
            *unloaded_checks(name, exc),  # checks after that point: their own ERROR each
        ]
        return None


def _walk(package: str, roots: Sequence[str]) -> Iterator[str]:
    """`package` and every module under it, in name order, importing each; the shipped modules
    kept apart (the examples) only when a root names them."""
    module = _import(package)
    yield package
    for info in pkgutil.iter_modules(getattr(module, "__path__", []), prefix=f"{package}."):
        if apart(info.name, roots):
            continue
        if info.ispkg:
            yield from _walk(info.name, roots)
        else:
            _import(info.name)
            yield info.name


def _inside(module: str, packages: Sequence[str]) -> bool:
    inside = any(module == p or module.startswith(f"{p}.") for p in packages)
    return inside and not apart(module, packages)


def discover_all(packages: Iterable[str] | str) -> Discovery:
    """Import every module under `packages` (checks register themselves) and return the checks
    defined there and the problems of those that could not be defined. Nothing raises. The
    shipped examples (`checks.examples`) are left out unless a package names them."""
    roots = [packages] if isinstance(packages, str) else [p.strip() for p in packages if p.strip()]
    with collecting():
        modules = [m for root in roots for m in _walk(root, roots)]
    checks = {
        name: check for name, check in registered().items() if _inside(check.__module__, roots)
    }
    taken = set(checks)
    problems = []
    for module in dict.fromkeys(modules):
        for problem in _PROBLEMS.get(module, []):
            if problem.name in taken:  # a duplicate name, or a problem beside a good check
                problem = _qualified(problem)
            taken.add(problem.name)
            problems.append(problem)
    return Discovery(checks, tuple(problems), tuple(roots))


def _qualified(problem: DefinitionProblem) -> DefinitionProblem:
    return replace(problem, name=problem.where)


def discover(package: str) -> dict[str, type[QualityCheck]]:
    """Import every module under `package` (checks register themselves) and return the checks
    defined there. Checks that could not be defined are logged and left out (`discover_all`
    returns them as problems)."""
    found = discover_all(package)
    for problem in found.problems:
        _log.warning("check definition problem: %s", problem.describe())
    return found.checks
