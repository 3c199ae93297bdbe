"""`dq validate`: import every module of the check packages and list every definition problem
(module, check, reason), so a team's CI can refuse a bad check before it is deployed. No Spark
session is started; problems that need the data (a key column missing from it, a checker that
raises) show up as ERROR outcomes of the first run instead."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from checks.problems import DefinitionProblem
from checks.registry import Discovery, discover_all


def validate(packages: Iterable[str] | str) -> Discovery:
    """The checks and problems of `packages` (nothing raises)."""
    return discover_all(packages)


def problem_lines(problems: Sequence[DefinitionProblem]) -> list[str]:
    """One line per problem, grouped by module: `module: check: reason`."""
    ordered = sorted(problems, key=lambda p: (p.module, p.name))
    return [f"{p.module or '?'}: {p.name}: {p.reason}" for p in ordered]


def summary(found: Discovery) -> str:
    modules = len({p.module for p in found.problems})
    if not found.problems:
        return f"{len(found.checks)} check(s), no problems"
    return (
        f"{len(found.checks)} check(s) fine; {len(found.problems)} problem(s) in "
        f"{modules} module(s)"
    )
