"""Definition digests of incremental checks: what an incremental check's stored partition states
were computed under (its module's source, its parser, its analyzers and their counted conditions in
the canonical form Spark's analyzer gives them), so that a changed definition re-reads its data and
an unchanged one re-reads nothing, in every process and on classic Spark and Spark Connect alike."""

from __future__ import annotations

import hashlib
import inspect
import re
import sys
from collections.abc import Iterator

from pyspark.sql import Column, DataFrame

from checkers.checker import CheckerPlan
from checkers.metrics import CountWhere
from checkers.parsers import Parser
from checks.base import QualityCheck

#: `<function <lambda> at 0x7f...>`: an address differs from one process to the next.
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def definition_digest(check: type[QualityCheck], parser: Parser, plan: CheckerPlan) -> str:
    """Changes whenever stored states may no longer mean the same: the check's module source,
    its parser (where it reads: a lazy path resolved), and what each analyzer computes (a
    counted condition's expression too, in its canonical form). Never an object's address nor
    the kind of session: the digest of a check must be the same in every process, whatever
    session it runs on (`canonical_conditions`)."""
    return _digest(check, parser, plan, iter(canonical_conditions(plan)))


def legacy_definition_digest(check: type[QualityCheck], parser: Parser, plan: CheckerPlan) -> str:
    """The digest states were stored under before conditions had a canonical form (a counted
    condition as its Column printed on a classic session): still accepted, so that upgrading
    re-reads nothing (tests/upgrade)."""
    legacy = (str(a.condition) for a in plan.analyzers if isinstance(a, CountWhere))
    return _digest(check, parser, plan, legacy)


def _digest(
    check: type[QualityCheck], parser: Parser, plan: CheckerPlan, conditions: Iterator[str]
) -> str:
    parts = [repr(parser), parser.describe(), check.name]
    module = sys.modules.get(check.__module__)
    try:
        parts.append(inspect.getsource(module) if module else check.__qualname__)
    except (OSError, TypeError):
        parts.append(check.__qualname__)
    for analyzer in plan.analyzers:
        parts.append(repr(analyzer))
        if isinstance(analyzer, CountWhere):
            parts.append(next(conditions))
    if plan.segmented is not None:  # what each segment's states are of
        parts.extend(repr(a) for a in plan.segmented.analyzers)
    text = _ADDRESS.sub("", "\n".join(parts))
    return hashlib.sha256(text.encode()).hexdigest()


def canonical_conditions(plan: CheckerPlan) -> list[str]:
    """The plan's counted conditions as Spark's analyzer names them over the plan's frame: the
    same text on a classic session and on Spark Connect, where `str()` of a Column is not (the
    client builds it). One analysis for all; a condition the frame cannot analyze keeps its own
    text (its check is an ERROR, and stores no state)."""
    conditions = [a.condition for a in plan.analyzers if isinstance(a, CountWhere)]
    frame = plan.frame
    if not conditions or frame is None:
        return [str(c) for c in conditions]
    try:
        return list(frame.select(*conditions).columns)
    except Exception:
        return [_canonical(frame, c) for c in conditions]


def _canonical(frame: DataFrame, condition: Column) -> str:
    try:
        return str(frame.select(condition).columns[0])
    except Exception:
        return str(condition)
