"""Key columns resolved against a DataFrame's schema: a name is a top-level column first (so a
column literally named `a.b` works), else a path into structs (`customer.id`). A name that
resolves to neither is a `KeyColumnError`, which makes the check's outcome an ERROR."""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

_SHOWN = 20


class KeyColumnError(ValueError):
    """A key column that is not in the data."""


def quoted(*parts: str) -> str:
    """A column path Spark reads literally: each part in backticks (backticks doubled)."""
    return ".".join("`" + p.replace("`", "``") + "`" for p in parts)


def _field(schema: StructType, name: str) -> str | None:
    names = schema.fieldNames()
    if name in names:
        return name
    folded = [n for n in names if n.lower() == name.lower()]  # Spark is case-insensitive
    return folded[0] if len(folded) == 1 else None


def _path(schema: StructType, name: str) -> list[str] | None:
    """The schema path of `name`: the whole name as one field, else split at dots into structs."""
    if (field := _field(schema, name)) is not None:
        return [field]
    head, dot, rest = name.partition(".")
    while dot:
        field = _field(schema, head)
        inner = schema[field].dataType if field is not None else None
        if isinstance(inner, StructType) and (tail := _path(inner, rest)) is not None:
            return [field, *tail]  # type: ignore[list-item]
        more, dot, rest = rest.partition(".")
        head = f"{head}.{more}"
    return None


def key_column(
    frame: DataFrame, name: str, *, role: str = "key column", of: str = "the data"
) -> Column:
    """The column `name` of `frame`, read literally; `KeyColumnError` when there is none."""
    schema = frame.schema
    path = _path(schema, name)
    if path is None:
        names = schema.fieldNames()
        shown = ", ".join(names[:_SHOWN]) + (
            f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else ""
        )
        raise KeyColumnError(
            f"{role} {name!r} is not a column of {of} (columns: {shown or 'none'}); "
            "fix key= / on= / KnownBroken(columns=...)"
        )
    return F.col(quoted(*path))


def key_columns(
    frame: DataFrame, names: Sequence[str], *, role: str = "key column", of: str = "the data"
) -> list[Column]:
    return [key_column(frame, n, role=role, of=of) for n in names]
