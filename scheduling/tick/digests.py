"""Definition digests of incremental checks: what an incremental check's stored partition states
were computed under (its module's code, its parser, its analyzers and their counted conditions in
the canonical form Spark's analyzer gives them), so that a changed definition re-reads its data and
an unchanged one re-reads nothing, in every process and on classic Spark and Spark Connect alike.
The module's code is its tokens: a comment, a blank line or spacing within a line is no change."""

from __future__ import annotations

import hashlib
import inspect
import io
import re
import sys
import tokenize
from collections.abc import Iterator

from pyspark.sql import Column, DataFrame

from checkers.checker import CheckerPlan
from checkers.metrics import CountWhere
from checkers.parsers import Parser
from checks.base import QualityCheck

#: `<function <lambda> at 0x7f...>`: an address differs from one process to the next.
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def definition_digest(check: type[QualityCheck], parser: Parser, plan: CheckerPlan) -> str:
    """Changes whenever stored states may no longer mean the same: the check's module code (not
    its comments or layout), its parser (where it reads: a lazy path resolved), and what each
    analyzer computes (a counted condition's expression too, in its canonical form). Never an
    object's address nor the kind of session: the digest of a check must be the same in every
    process, whatever session it runs on (`canonical_conditions`)."""
    return accepted_digests(check, parser, plan)[0]


def accepted_digests(check: type[QualityCheck], parser: Parser, plan: CheckerPlan) -> list[str]:
    """The digests under which stored states still hold for this definition: first today's
    (`definition_digest`), then those earlier versions stored, so that upgrading re-reads
    nothing (tests/upgrade): the module's whole text with canonical conditions, and with
    conditions as their Column printed on a classic session (before they had a canonical form)."""
    source = _module_source(check)
    canonical = canonical_conditions(plan)
    printed = [str(a.condition) for a in plan.analyzers if isinstance(a, CountWhere)]
    return [
        _digest(check, parser, plan, iter(canonical), _code(source)),
        _digest(check, parser, plan, iter(canonical), source),
        _digest(check, parser, plan, iter(printed), source),
    ]


def _module_source(check: type[QualityCheck]) -> str:
    module = sys.modules.get(check.__module__)
    try:
        return inspect.getsource(module) if module else check.__qualname__
    except (OSError, TypeError):
        return check.__qualname__


def _code(source: str) -> str:
    """The source's tokens without comments and line breaks inside brackets, one per line
    (indentation as INDENT and DEDENT): what the code says, not how it is laid out."""
    skipped = (tokenize.COMMENT, tokenize.NL)
    named = (tokenize.INDENT, tokenize.DEDENT, tokenize.NEWLINE)
    try:
        tokens = tokenize.generate_tokens(io.StringIO(source).readline)
        return "\n".join(
            tokenize.tok_name[t.type] if t.type in named else t.string
            for t in tokens
            if t.type not in skipped
        )
    except (tokenize.TokenError, SyntaxError):  # not Python after all: its text
        return source


def _digest(
    check: type[QualityCheck],
    parser: Parser,
    plan: CheckerPlan,
    conditions: Iterator[str],
    module: str,
) -> str:
    parts = [repr(parser), parser.describe(), check.name, module]
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
