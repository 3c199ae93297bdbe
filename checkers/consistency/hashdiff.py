"""The comparison: positions are cut into cells on a grid; each side counts and checksums its rows
per cell in its own engine; cells whose numbers differ are cut `factor` times finer, level by
level, until they hold at most `threshold` rows (or one position); only then are their rows
fetched and compared column by column. With d differing rows in n, about d x threshold rows move.
When most cells of a level differ (thousands of differences spread over the table), each level
cut `factor` times finer would hash nearly all their rows again and still find most of its cells
differing, so the next level is cut at once to cells of a few rows, and only those that differ
are fetched.

A row's position is its key when the key is one integer column, else a number from the md5 of the
key's canonical texts: the same rows in every engine either way, where ranges of text would follow
each database's collation. Duplicated keys are looked for (unless the database guarantees
uniqueness) and reported on their own, never hidden in a checksum."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial

from checkers.consistency import grid
from checkers.consistency.normalise import Kind, Rules
from checkers.consistency.pair import Pair, opened
from checkers.consistency.sides import (
    ALL,
    Cell,
    Fetched,
    Key,
    KeyPlan,
    Range,
    RowPlan,
    Selection,
    Side,
    is_unsupported,
)

#: Kinds compared together when the two sides differ: the wider one on both.
_WIDER: dict[frozenset[str], Kind] = {
    frozenset({"integer", "decimal"}): "decimal",
    frozenset({"integer", "float"}): "float",
    frozenset({"decimal", "float"}): "float",
}

#: Most cells of the first level (a few kB of counts and sums from each side).
FIRST_LEVEL_CELLS = 4096

MISSING_IN_LEFT = "missing_in_left"
MISSING_IN_RIGHT = "missing_in_right"
DIFFERING = "differing"
DUPLICATE_KEY = "duplicate_key"
KINDS = (MISSING_IN_LEFT, MISSING_IN_RIGHT, DIFFERING, DUPLICATE_KEY)


@dataclass(frozen=True)
class Difference:
    key: Key
    kind: str
    columns: tuple[str, ...] = ()
    left: dict[str, object] | None = None
    right: dict[str, object] | None = None


@dataclass
class Comparison:
    """What the comparison found and what it cost."""

    columns: tuple[str, ...]
    differences: list[Difference] = field(default_factory=list)
    rows: tuple[int, int] = (0, 0)
    null_keys: tuple[int, int] = (0, 0)
    #: Keys occurring more than once on each side (all of them, listed or not).
    duplicate_keys: tuple[int, int] = (0, 0)
    #: Duplicated keys beyond those listed as differences.
    duplicates_unlisted: int = 0
    #: Whether each side was searched for duplicated keys (else they surface in the bisection).
    searched: tuple[bool, bool] = (True, True)
    levels: int = 0
    #: Whether most cells of a level differed, so the next level was cut to a few rows a cell.
    deep_cut: bool = False
    rows_fetched: tuple[int, int] = (0, 0)
    queries: tuple[int, int] = (0, 0)
    only_in: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
    #: Whether rows were placed by a hash of their key (a text or composite key).
    hashed: bool = False

    def count(self, kind: str) -> int:
        return sum(1 for d in self.differences if d.kind == kind)

    @property
    def elements(self) -> int:
        """Keys compared: every row of the left, and the right's rows the left lacks."""
        return self.rows[0] + self.count(MISSING_IN_LEFT) + self.null_keys[1]


def _column(kinds: dict[str, Kind], name: str) -> str | None:
    if name in kinds:
        return name
    folded = [c for c in kinds if c.lower() == name.lower()]
    return folded[0] if len(folded) == 1 else None


def _check_key_kinds(name: str, left: Kind, right: Kind) -> None:
    """Keys are matched by their canonical texts (and placed by them when hashed): both sides
    need the same kind, and a kind whose values are equal exactly."""
    if left != right:
        raise ValueError(
            f"key column {name!r} is {left} on the left and {right} on the right: keys are "
            "matched by their canonical texts, so both sides need the same kind; cast one side "
            "(a view or a query)"
        )
    if is_unsupported(left) or left == "float":
        why = str(left) if is_unsupported(left) else "floats are equal within a tolerance"
        raise ValueError(
            f"key column {name!r} cannot be a key across stores: {why}; key on integers, "
            "text, decimals, dates or timestamps, or read both sides into Spark and join them "
            f"with PredicateDoubleDatasetsChecker(left, right, on=[{name!r}, ...])"
        )


@dataclass(frozen=True)
class _Plans:
    key: tuple[KeyPlan, KeyPlan]
    names: tuple[str, ...]
    left: RowPlan
    right: RowPlan
    only_in: tuple[tuple[str, ...], tuple[str, ...]]

    @property
    def sides(self) -> tuple[RowPlan, RowPlan]:
        return self.left, self.right


def plan_columns(
    sides: tuple[Side, Side],
    kinds: tuple[dict[str, Kind], dict[str, Kind]],
    key: Sequence[str],
    columns: Sequence[str] | None,
    rules: Rules,
) -> _Plans:
    """Match the two sides' columns (case-insensitively) and agree on each one's kind; a key or
    column missing on a side, or kinds that cannot be compared, is a ValueError saying which."""
    left, right = sides
    found_keys: tuple[list[str], list[str]] = ([], [])
    for name in key:
        for side, side_kinds, found in zip(sides, kinds, found_keys, strict=True):
            column = _column(side_kinds, name)
            if column is None:
                raise ValueError(
                    f"key column {name!r} is missing on the {side.role} ({side.describe()})"
                )
            found.append(column)
    key_kinds = tuple(
        tuple(k[c] for c in found) for k, found in zip(kinds, found_keys, strict=True)
    )
    for name, a, b in zip(key, *key_kinds, strict=True):
        _check_key_kinds(name, a, b)
    lk, rk = (set(k) - set(f) for k, f in zip(kinds, found_keys, strict=True))
    if columns is None:
        names = [c for c in kinds[0] if c in lk and _column(kinds[1], c) in rk]
    else:
        names = list(columns)
    pairs: list[tuple[str, str]] = []
    for name in names:
        matched = [_column(k, name) for k in kinds]
        for side, f in zip(sides, matched, strict=True):
            if f is None:
                raise ValueError(
                    f"column {name!r} is missing on the {side.role} ({side.describe()})"
                )
        pairs.append((matched[0], matched[1]))  # type: ignore[arg-type]
    agreed: list[Kind] = []
    for (a, b), name in zip(pairs, names, strict=True):
        ka, kb = kinds[0][a], kinds[1][b]
        for kind, side in ((ka, left), (kb, right)):
            if is_unsupported(kind):
                raise ValueError(f"column {name!r} on the {side.role} cannot be compared: {kind}")
        if ka == kb:
            agreed.append(ka)
        elif (wider := _WIDER.get(frozenset({ka, kb}))) is not None:
            agreed.append(wider)
        else:
            raise ValueError(
                f"column {name!r} is {ka} on the left and {kb} on the right: cast one side "
                "(a view or a query) so both hold the same kind, or leave it out of columns=[...]"
            )
    paired = {p for pair in pairs for p in pair}
    only = tuple(
        tuple(c for c in k if c not in paired and c not in f)
        for k, f in zip(kinds, found_keys, strict=True)
    )
    return _Plans(
        key=(
            KeyPlan(tuple(found_keys[0]), key_kinds[0], rules),
            KeyPlan(tuple(found_keys[1]), key_kinds[1], rules),
        ),
        names=tuple(names),
        left=RowPlan(tuple(a for a, _ in pairs), tuple(agreed), rules),
        right=RowPlan(tuple(b for _, b in pairs), tuple(agreed), rules),
        only_in=only,  # type: ignore[arg-type]
    )


def compare(
    left: Side,
    right: Side,
    key: Sequence[str],
    columns: Sequence[str] | None,
    rules: Rules,
    *,
    factor: int = 32,
    threshold: int = 64,
    first_cells: int = FIRST_LEVEL_CELLS,
) -> Comparison:
    with opened(left, right) as pair:
        kinds = pair.both(lambda side, _: side.kinds())
        plans = plan_columns((left, right), kinds, key, columns, rules)
        comparison = Comparison(
            columns=plans.names, only_in=plans.only_in, hashed=plans.key[0].hashed
        )
        bounds = pair.both(lambda side, i: side.bounds(plans.key[i]))
        comparison.rows = (bounds[0].rows, bounds[1].rows)
        comparison.null_keys = (bounds[0].null_keys, bounds[1].null_keys)
        duplicated = _duplicates(pair, plans, comparison)
        lows = [b.low for b in bounds if b.low is not None]
        highs = [b.high for b in bounds if b.high is not None]
        if lows:
            bounds_ = (min(lows), max(highs))
            _bisect(pair, plans, comparison, duplicated, bounds_, factor, threshold, first_cells)
        comparison.rows_fetched = (left.rows_fetched, right.rows_fetched)
        comparison.queries = (left.queries, right.queries)
        return comparison


def _duplicates(pair: Pair, plans: _Plans, comparison: Comparison) -> set[Key]:
    """Keys held more than once. A side is searched only when neither side's engine guarantees
    a unique key: facing a unique side, a key held twice makes its cell's count differ, so the
    bisection reaches it and `_compare_rows` reports and counts it, without a scan of its own."""
    unique = pair.both(lambda side, i: side.has_unique_key(plans.key[i]))
    comparison.searched = (not any(unique),) * 2

    def duplicates(side: Side, index: int) -> tuple[int, dict[Key, int]]:
        return side.duplicates(plans.key[index]) if not any(unique) else (0, {})

    found = pair.both(duplicates)
    totals = [total for total, _ in found]
    counts = [listed for _, listed in found]
    keys = sorted(set(counts[0]) | set(counts[1]))
    for k in keys:
        comparison.differences.append(
            Difference(
                k,
                DUPLICATE_KEY,
                left={"rows": counts[0].get(k, "at most 1")},
                right={"rows": counts[1].get(k, "at most 1")},
            )
        )
    comparison.duplicate_keys = (totals[0], totals[1])
    comparison.duplicates_unlisted = max(0, sum(totals) - sum(len(c) for c in counts))
    return set(keys)


def _bisect(
    pair: Pair,
    plans: _Plans,
    comparison: Comparison,
    duplicated: set[Key],
    bounds: tuple[int, int],
    factor: int,
    threshold: int,
    first_cells: int,
) -> None:
    low, high = bounds
    # The first level reads every row anyway: many cells cost nothing more and spare levels.
    width = 1
    while (high - low + 1) / width > first_cells:
        width *= factor
    selected: Selection | None = ALL
    while selected is not None:
        comparison.levels += 1
        found = pair.both(partial(_cells, plans=plans, selected=selected, low=low, width=width))
        fetch: list[tuple[Range, int]] = []
        split: list[tuple[Range, int]] = []
        cells: list[tuple[Range, int, bool]] = []  # every cell: its span, rows, whether it differs
        for cell in sorted(set(found[0]) | set(found[1])):
            a, b = found[0].get(cell), found[1].get(cell)
            rows = max(a[0] if a else 0, b[0] if b else 0)
            span = (low + cell * width, low + (cell + 1) * width)
            cells.append((span, rows, a != b))
            if a != b:
                (fetch if width == 1 or rows <= threshold else split).append((span, rows))
        differing = len(fetch) + len(split)
        if split and len(cells) >= grid.DEEP_CUT_MIN_CELLS and 2 * differing > len(cells):
            # Most cells differ: each level cut `factor` times finer would hash nearly all their
            # rows again and still find most of its cells differing, so the next level is cut
            # at once to cells of a few rows (`grid.deep_width`), whose differing ones are fetched.
            comparison.deep_cut = True
            rows = sum(r for _, r in fetch) + sum(r for _, r in split)
            selected = Selection(tuple(grid.spans(cells)), low, width)
            width = grid.deep_width(width, rows, differing, threshold)
            continue
        if fetch:
            chosen = Selection(tuple(grid.merged(span for span, _ in fetch)), low, width)
            _compare_rows(pair, plans, comparison, duplicated, chosen)
        spans = [span for span, _ in split]
        selected = Selection(tuple(grid.merged(spans)), low, width) if split else None
        width = max(1, width // factor)


def _cells(
    side: Side, index: int, *, plans: _Plans, selected: Selection, low: int, width: int
) -> dict[int, Cell]:
    return side.cells(plans.key[index], plans.sides[index], selected, low, width)


def _compare_rows(
    pair: Pair, plans: _Plans, comparison: Comparison, duplicated: set[Key], selected: Selection
) -> None:
    fetched = pair.both(lambda side, i: side.rows(plans.key[i], plans.sides[i], selected))
    rows = (_by_key(fetched[0]), _by_key(fetched[1]))
    floats = [kind == "float" for kind in plans.left.kinds]
    for k in sorted(set(rows[0]) | set(rows[1])):
        here, there = rows[0].get(k, []), rows[1].get(k, [])
        if k in duplicated or (len(here) == len(there) == 1 and here[0] == there[0]):
            continue  # listed already, or the same values exactly
        if len(here) > 1 or len(there) > 1:  # beyond those listed, or on a side not searched
            duplicated.add(k)
            comparison.differences.append(
                Difference(k, DUPLICATE_KEY, (), {"rows": len(here)}, {"rows": len(there)})
            )
            _count_duplicate(comparison, (len(here) > 1, len(there) > 1))
            continue
        if not here:
            comparison.differences.append(
                Difference(k, MISSING_IN_LEFT, right=_values(plans, there[0], floats))
            )
        elif not there:
            comparison.differences.append(
                Difference(k, MISSING_IN_RIGHT, left=_values(plans, here[0], floats))
            )
        else:
            differing = _differing(plans, here[0], there[0], floats)
            if differing:
                comparison.differences.append(
                    Difference(
                        k,
                        DIFFERING,
                        differing,
                        {
                            c: v
                            for c, v in _values(plans, here[0], floats).items()
                            if c in differing
                        },
                        {
                            c: v
                            for c, v in _values(plans, there[0], floats).items()
                            if c in differing
                        },
                    )
                )


def _count_duplicate(comparison: Comparison, held: tuple[bool, bool]) -> None:
    if any(h and s for h, s in zip(held, comparison.searched, strict=True)):
        comparison.duplicates_unlisted = max(0, comparison.duplicates_unlisted - 1)
    comparison.duplicate_keys = tuple(  # type: ignore[assignment]
        n + int(h and not s)
        for n, h, s in zip(comparison.duplicate_keys, held, comparison.searched, strict=True)
    )


def _by_key(rows: list[Fetched]) -> dict[Key, list[Fetched]]:
    grouped: dict[Key, list[Fetched]] = {}
    for row in rows:
        grouped.setdefault(row.key, []).append(row)
    return grouped


def _values(plans: _Plans, row: Fetched, floats: list[bool]) -> dict[str, object]:
    values: dict[str, object] = {}
    next_float = iter(row.floats)
    for name, text, is_float in zip(plans.names, row.texts, floats, strict=True):
        values[name] = next(next_float) if is_float else text
    return values


def _differing(plans: _Plans, a: Fetched, b: Fetched, floats: list[bool]) -> tuple[str, ...]:
    tolerance = plans.left.rules.float_tolerance
    fa, fb = iter(a.floats), iter(b.floats)
    names: list[str] = []
    for name, ta, tb, is_float in zip(plans.names, a.texts, b.texts, floats, strict=True):
        if is_float:
            if not _close(next(fa), next(fb), tolerance):
                names.append(name)
        elif ta != tb:
            names.append(name)
    return tuple(names)


def _close(a: float | None, b: float | None, tolerance: float) -> bool:
    if a is None or b is None:
        return a is b
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= tolerance
