"""What a check class must look like: each class attribute's type and range, checked when the
class is defined, with a message that says how to fix it. No Spark, no I/O."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

from checkers.levels import AlertLevel
from checkers.tolerances import Tolerance
from checks.assets import Guarded, upstream_problem


class CheckDefinitionError(TypeError, ValueError):
    """A check class that cannot run as written; `problems` lists each mistake."""

    def __init__(self, where: str, problems: list[str]) -> None:
        super().__init__(f"{where}: " + "; ".join(problems))
        self.where = where
        self.problems = problems


def _names(value: object, attribute: str, example: str) -> str | None:
    if isinstance(value, str):
        return f"{attribute} is one string; give a tuple of them: {attribute} = ({value!r},)"
    if not isinstance(value, tuple | list | frozenset | set) or not all(
        isinstance(v, str) for v in value
    ):
        return (
            f"{attribute} must be a tuple of strings, e.g. {attribute} = {example}, got {value!r}"
        )
    return None


def _parser(value: object) -> str | None:
    from checkers.parsers import Parser  # the parsers module imports pyspark (no session)

    hint = 'e.g. parser = CsvParser("data/orders.csv", schema="id int, amount double")'
    if isinstance(value, Parser):
        return None
    if isinstance(value, type):
        return f"parser is the class {value.__name__}; build one: {value.__name__}(...) ({hint})"
    if isinstance(value, Mapping):
        wrong = {
            k: v for k, v in value.items() if not isinstance(k, str) or not isinstance(v, Parser)
        }
        if not value or wrong:
            return (
                f"parser as a dict maps names to Parsers, e.g. "
                f"{{'ops': SqlQueryParser(...), 'lake': TableParser(...)}}, got {value!r}"
            )
        return None
    if callable(value):
        return None  # a method building the parser at run time
    if isinstance(value, str):
        return f"parser is a string; wrap it in a Parser, {hint}"
    return (
        f"parser must be a Parser, a dict of them or a method returning one ({hint}), got {value!r}"
    )


def _clock(value: object) -> str | None:
    if value is None or callable(getattr(value, "fires_between", None)):
        return None
    if isinstance(value, str):
        return f"clock is a string; wrap it: clock = Cron({value!r})"
    return f"clock must have fires_between(start, end), e.g. Cron('0 * * * *'), got {value!r}"


def _tolerance(value: object) -> str | None:
    if isinstance(value, Tolerance):
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        hint = f": for 'fewer than {value} failing' write LessThan({value})"
    elif isinstance(value, float):
        hint = f": for 'at most a share of {value}' write ShareAtMost({value})"
    else:
        hint = ", e.g. LessThan(10), ShareAtMost(0.01) or KnownBroken([...])"
    return f"tolerance must be a Tolerance, got {value!r}{hint}"


def _alert_level(value: object) -> str | None:
    if callable(getattr(value, "level", None)):
        return None
    if isinstance(value, AlertLevel):
        return f"alert_level is a level; wrap it: alert_level = FixedLevel(AlertLevel.{value.name})"
    return (
        f"alert_level must have a level(failing, total) method, e.g. "
        f"FailingElementsThresholds(warning=10, error=100), got {value!r}"
    )


def _error_level(value: object) -> str | None:
    if isinstance(value, AlertLevel):
        return None
    hint = f"AlertLevel.{value.upper()}" if isinstance(value, str) else "AlertLevel.ERROR"
    return f"error_level must be an AlertLevel, e.g. error_level = {hint}, got {value!r}"


def _escalation(value: object) -> str | None:
    from alerting.policy import EscalationPolicy

    if value is None or isinstance(value, EscalationPolicy):
        return None
    return (
        f"escalation must be an EscalationPolicy (or None for the default), e.g. "
        f"EscalationPolicy(routes={{'slack': AlertLevel.WARNING}}), got {value!r}"
    )


def _sample_size(value: object) -> str | None:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return None
    return f"sample_size must be a whole number >= 0 (failing rows kept), e.g. 20, got {value!r}"


def _guards(value: object) -> str | None:
    if value is None or isinstance(value, Guarded):
        return None
    if isinstance(value, str):
        return f"guards is a string; wrap it: guards = Guarded({value!r})"
    if value is True:
        return "guards = True: write guards = Guarded() (the asset is then named after the check)"
    example = "guards = Guarded('lake/flights')"
    return f"guards must be Guarded(...) or None, e.g. {example}, got {value!r}"


def _after(value: object) -> str | None:
    if problem := _names(value, "after", "('producer/flights',)"):
        return problem
    return next((p for v in value if (p := upstream_problem(v))), None)  # type: ignore[attr-defined]


def _text(attribute: str) -> Callable[[object], str | None]:
    def rule(value: object) -> str | None:
        ok = isinstance(value, str)
        return None if ok else f"{attribute} must be a string, got {value!r}"

    return rule


def _flag(attribute: str) -> Callable[[object], str | None]:
    def rule(value: object) -> str | None:
        if isinstance(value, bool):
            return None
        return f"{attribute} must be True or False, got {value!r}"

    return rule


def _task_states(value: object) -> str | None:
    from checks.task_states import TaskStates

    if value is None or isinstance(value, TaskStates):
        return None
    return (
        "task_states must be a TaskStates (or None for the deployment's default), e.g. "
        f"task_states = TaskStates(fail_at=AlertLevel.CRITICAL), got {value!r}"
    )


def _incremental(value: object) -> str | None:
    from checks.incremental import Incremental

    if value is None or isinstance(value, Incremental):
        return None
    if value is True:
        return "incremental = True: write incremental = Incremental() (all partitions)"
    return (
        "incremental must be Incremental(...) or None, e.g. "
        f"incremental = Incremental(last=30), got {value!r}"
    )


def _runbook(value: object) -> str | None:
    import urllib.parse

    if value is None:
        return None
    if isinstance(value, str):
        parts = urllib.parse.urlsplit(value.strip())
        if parts.scheme in ("http", "https") and parts.netloc:
            return None
    example = 'runbook = "https://wiki.example.com/x"'
    return f"runbook must be an http(s) URL, e.g. {example}, got {value!r}"


def _sensitivity(value: object) -> str | None:
    from checkers.metrics.sensitivity import sensitivity_problem

    return sensitivity_problem(value, None)


def _min_change(value: object) -> str | None:
    from checkers.metrics.sensitivity import sensitivity_problem

    return sensitivity_problem(None, value)


_RULES: dict[str, Callable[[object], str | None]] = {
    "parser": _parser,
    "clock": _clock,
    "tolerance": _tolerance,
    "alert_level": _alert_level,
    "error_level": _error_level,
    "escalation": _escalation,
    "owner": _text("owner"),
    "runbook": _runbook,
    "description": _text("description"),
    "tags": lambda v: _names(v, "tags", "('payments', 'daily')"),
    "masked_columns": lambda v: _names(v, "masked_columns", "('email', 'phone')"),
    "sample_size": _sample_size,
    "allow_empty": _flag("allow_empty"),
    "inhibits": _flag("inhibits"),
    "guards": _guards,
    "after": _after,
    "task_states": _task_states,
    "incremental": _incremental,
    "sensitivity": _sensitivity,
    "min_change": _min_change,
}


def _triggers_itself(check: type) -> str | None:
    """`after` naming the check's own guarded asset (by name or by its readiness URI)."""
    guards, name = getattr(check, "guards", None), getattr(check, "name", None)
    after = getattr(check, "after", ())
    if not isinstance(guards, Guarded) or not isinstance(name, str):
        return None
    own = guards.airflow_asset(name)
    if isinstance(after, tuple | list) and any(a in own.values() for a in after):
        return (
            f"after names {own['name']!r}, the asset this check guards: it would trigger "
            "itself; name the producer's asset instead"
        )
    return None


def definition_problems(check: type, *, base_checker: object) -> list[str]:
    """Every mistake in `check`'s class attributes (empty when it can run)."""
    problems = []
    if not hasattr(check, "parser"):
        problems.append(
            "needs a `parser` (where its data comes from), e.g. "
            'parser = CsvParser("data/orders.csv", schema="id int, amount double")'
        )
    if getattr(check, "checker", base_checker) is base_checker:
        problems.append(
            "needs a `checker(self, data)` method (what to check), e.g. "
            "return PredicateSingleDatasetChecker(data, 'amount >= 0')"
        )
    elif not callable(check.checker):  # type: ignore[attr-defined]
        problems.append("checker must be a method: def checker(self, data): return ...")
    for attribute, rule in _RULES.items():
        if hasattr(check, attribute) and (problem := rule(getattr(check, attribute))):
            problems.append(problem)
    name = getattr(check, "name", None)
    if getattr(check, "incremental", None) is not None and not problems:
        problems.extend(incremental_problems(check))
    if loop := _triggers_itself(check):
        problems.append(loop)
    if not isinstance(name, str) or not re.fullmatch(r"[a-z0-9][a-z0-9_.-]*", name):
        problems.append(
            f"name {name!r}: use lowercase letters, digits, _ . - (start with a letter or digit), "
            "e.g. name = 'orders_have_amounts'"
        )
    return problems


def incremental_problems(check: type) -> list[str]:
    """What makes an incremental check impossible, as far as its class shows: more than one
    source, a source without partitioning, a checker (by its return annotation) that cannot
    merge over partitions."""
    import typing

    from checkers.checker import Checker
    from checkers.parsers import Parser

    parser = getattr(check, "parser", None)
    problems = []
    if isinstance(parser, Mapping):
        problems.append(
            "an incremental check reads one partitioned source; it has "
            f"{len(parser)} ({', '.join(map(str, parser))})"
        )
    elif isinstance(parser, Parser) and parser.partitioning is None:
        problems.append(
            f"incremental needs a partitioned source: give {type(parser).__name__} "
            "partitioning=HivePartitions(...) (files) or PartitionColumn(...) (tables, SQL)"
        )
    try:
        returned = typing.get_type_hints(check.checker).get("return")  # type: ignore[attr-defined]
    except Exception:  # names the annotation uses are not importable here: judged at run time
        returned = None
    if isinstance(returned, type) and issubclass(returned, Checker):
        reason = _static_incremental_problem(returned)
        if reason:
            problems.append(reason)
    return problems


def _static_incremental_problem(checker: type) -> str | None:
    from checkers.checker import Checker
    from checkers.double_checkers import PredicateDoubleDatasetsChecker

    if issubclass(checker, PredicateDoubleDatasetsChecker):
        return (
            f"checker() returns {checker.__name__}, which joins two datasets and cannot be "
            "evaluated per partition: drop incremental, or check each dataset on its own"
        )
    if checker.incremental_problem is Checker.incremental_problem:  # type: ignore[attr-defined]
        return f"checker() returns {checker.__name__}, which cannot be evaluated incrementally"
    return None


def refuse_shared_asset(check: type, registered: Iterable[type]) -> None:
    """One check guards an asset: a second one would overwrite the first one's verdict."""
    guards = getattr(check, "guards", None)
    if not isinstance(guards, Guarded):
        return
    asset = guards.name_for(check.name)  # type: ignore[attr-defined]
    where = f"{check.__module__}.{check.__qualname__}"
    for other in registered:
        theirs = getattr(other, "guards", None)
        if not isinstance(theirs, Guarded) or theirs.name_for(other.name) != asset:  # type: ignore[attr-defined]
            continue
        if f"{other.__module__}.{other.__qualname__}" != where:  # not a re-import of itself
            raise CheckDefinitionError(
                where,
                [
                    f"guards {asset!r}, which {other.__module__}.{other.__qualname__} guards "
                    "already: one check gates an asset (combine the rules in one check, or "
                    "name the assets apart)"
                ],
            )


def validate_definition(check: type, *, base_checker: object) -> None:
    """Raise `CheckDefinitionError` listing every mistake of `check`."""
    problems = definition_problems(check, base_checker=base_checker)
    if problems:
        raise CheckDefinitionError(f"{check.__module__}.{check.__qualname__}", problems)
