"""`DefinitionProblem`: a check (or a whole module) that could not be defined. Discovery collects
them instead of raising, so one team's mistake never stops the others; each becomes that check's
ERROR outcome, recorded and alerted to its owner."""

from __future__ import annotations

import datetime as dt
import inspect
import re
import traceback
from dataclasses import dataclass

from checkers.levels import AlertLevel
from checkers.outcome import CheckOutcome, Status

MODULE_PREFIX = "module:"


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z][a-z])|(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


@dataclass(frozen=True)
class DefinitionProblem:
    """Why check `name` (or module `module`, named `module:<module>`) could not be defined.
    `qualname` is the class ("" for a module); `owner`, `escalation` and `error_level` are the
    check's when they could be read, so the ERROR reaches whoever the check names."""

    name: str
    module: str
    qualname: str
    reason: str
    owner: str = ""
    escalation: object | None = None
    error_level: AlertLevel = AlertLevel.ERROR
    #: The module stopped importing at this problem (checks defined after it are not loaded).
    import_failed: bool = False

    @property
    def where(self) -> str:
        return f"{self.module}.{self.qualname}" if self.qualname else self.module

    def describe(self) -> str:
        return f"{self.module}: {self.name}: {self.reason}"


def _readable(value: object, kind: type, default: object) -> object:
    return value if isinstance(value, kind) else default


def exception_line(exc: BaseException) -> str:
    if isinstance(exc, SyntaxError):
        where = f"line {exc.lineno}" if exc.lineno else "?"
        return f"SyntaxError: {exc.msg} ({exc.filename or '?'}, {where})"
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def valid_name(name: object) -> bool:
    return isinstance(name, str) and re.fullmatch(r"[a-z0-9][a-z0-9_.-]*", name) is not None


def for_class(check: type, reason: str) -> DefinitionProblem:
    """The problem of a check class whose definition was refused (the class exists)."""
    name = getattr(check, "name", None)
    return DefinitionProblem(
        name=name if valid_name(name) else snake(check.__name__),  # type: ignore[arg-type]
        module=check.__module__,
        qualname=check.__qualname__,
        reason=reason,
        owner=_readable(getattr(check, "owner", ""), str, ""),  # type: ignore[arg-type]
        escalation=getattr(check, "escalation", None),
        error_level=_readable(getattr(check, "error_level", None), AlertLevel, AlertLevel.ERROR),  # type: ignore[arg-type]
    )


def _class_body(exc: BaseException, module: str) -> dict[str, object] | None:
    """The namespace of the outermost class body of `module` that was executing when `exc` was
    raised (a class body frame is not optimized and has `__qualname__` in its locals)."""
    for frame, _ in traceback.walk_tb(exc.__traceback__):
        code = frame.f_code
        if (
            frame.f_globals.get("__name__") == module
            and not code.co_flags & inspect.CO_OPTIMIZED
            and code.co_name != "<module>"
            and "__qualname__" in frame.f_locals
        ):
            return dict(frame.f_locals)
    return None


def for_import_failure(module: str, exc: BaseException) -> DefinitionProblem:
    """The problem of a module that failed to import: named after the check whose class body
    raised when that can be told, else `module:<module>`."""
    stopped = "(the module stopped importing there: each check defined after it is an ERROR too)"
    body = None if isinstance(exc, SyntaxError) else _class_body(exc, module)
    if body is None:
        return DefinitionProblem(
            name=f"{MODULE_PREFIX}{module}",
            module=module,
            qualname="",
            reason=f"module failed to import: {exception_line(exc)}",
            import_failed=True,
        )
    qualname = str(body["__qualname__"])
    name = body.get("name")
    return DefinitionProblem(
        name=name if valid_name(name) else snake(qualname.rpartition(".")[2]),  # type: ignore[arg-type]
        module=module,
        qualname=qualname,
        reason=f"{exception_line(exc)} {stopped}",
        owner=_readable(body.get("owner", ""), str, ""),  # type: ignore[arg-type]
        escalation=body.get("escalation"),
        error_level=_readable(body.get("error_level"), AlertLevel, AlertLevel.ERROR),  # type: ignore[arg-type]
        import_failed=True,
    )


def problem_outcome(problem: DefinitionProblem, now: dt.datetime) -> CheckOutcome:
    """The ERROR outcome a problem stands for in a run."""
    return CheckOutcome(
        check=problem.name,
        status=Status.ERROR,
        level=problem.error_level,
        error=f"definition error in {problem.where}: {problem.reason}"
        if problem.where
        else problem.reason,
        started_at=now,
        finished_at=now,
        owner=problem.owner,
    )
