"""How much of the failing data an outcome carries: every cell, sample and error is cut at a
documented size with a marker saying how much was left out, so one wide failing row never
writes megabytes into the database, the notifications or the alert log (docs/checkers.md,
"Bounded samples"). The failing-rows file keeps more of each row, up to its own limits."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

#: A cell (or a failing key) in the stored outcome, the notifications and the report.
CELL_CHARS = 200
#: The whole sample of a stored outcome, as JSON.
SAMPLE_BYTES = 32_768
#: An error text in the stored outcome.
ERROR_CHARS = 4_000
#: A cell, and the whole file, of the failing-rows file (and of the sample a run holds).
FILE_CELL_CHARS = 10_000
FILE_BYTES = 4 * 1024 * 1024
#: The key of the marker row that ends a cut sample.
MORE = "…"


@dataclass(frozen=True)
class Limits:
    cell_chars: int
    total_bytes: int


STORED = Limits(CELL_CHARS, SAMPLE_BYTES)
IN_FILE = Limits(FILE_CELL_CHARS, FILE_BYTES)


def cut_text(text: str, chars: int) -> str:
    """`text`, or its first `chars` characters and how many more there were."""
    if len(text) <= chars:
        return text
    return f"{text[:chars]}… ({len(text) - chars:,} more characters)"


def bounded_value(value: object, chars: int | None) -> object:
    """A JSON value with every string cut at `chars` (None: kept whole); NaN and infinities as
    text (JSON has no such numbers)."""
    if isinstance(value, str):
        return value if chars is None else cut_text(value, chars)
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, Mapping):
        return {k: bounded_value(v, chars) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [bounded_value(v, chars) for v in value]
    return value


def bounded_rows(rows: Iterable[Mapping[str, object]], limits: Limits) -> list[dict[str, object]]:
    """The rows with their cells cut, as many as fit in `limits.total_bytes` of JSON; when some
    are left out, a last row `{"…": "N more rows"}` says how many."""
    kept: list[dict[str, object]] = []
    size = 0
    listed = list(rows)
    for n, row in enumerate(listed):
        cut = _row(row, limits)
        size += len(json.dumps(cut, default=str).encode())
        if size > limits.total_bytes and kept:
            kept.append({MORE: f"{len(listed) - n} more rows"})
            break
        kept.append(cut)
    return kept


def _row(row: Mapping[str, object], limits: Limits) -> dict[str, object]:
    """The row's cells cut, and as many of its columns as fit in `limits.total_bytes`."""
    cut: dict[str, object] = {}
    size = 0
    for n, (key, value) in enumerate(row.items()):
        cell = bounded_value(value, limits.cell_chars)
        size += len(json.dumps({str(key): cell}, default=str).encode())
        if size > limits.total_bytes and cut:
            cut[MORE] = f"{len(row) - n} more columns"
            break
        cut[str(key)] = cell
    return cut
