"""One canonical text per value and one row hash, computed alike in PostgreSQL, MariaDB, SQLite and
Spark, so the same logical row hashes to the same two 28-bit integers in every engine (the rules are
listed in docs/consistency.md, "How values are compared")."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import sqlalchemy as sa
from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T
from sqlalchemy.dialects import mysql

from checkers.consistency._canonical import GRID_LIMIT, SQLITE_FUNCTIONS, ExactSum

Kind = Literal[
    "integer", "decimal", "float", "text", "boolean", "date", "timestamp", "timestamp_tz"
]
DIALECTS = ("postgresql", "mysql", "mariadb", "sqlite")
SEPARATOR = "|"
"""Between the parts of a row's encoding (see docs/consistency.md, "How values are compared")."""
NULL_LENGTH = "-"
"""The length part of a NULL text; a text's length part is otherwise its UTF-8 byte count."""
EMPTY = "''"
SUM_DIGITS = 14
"""Hex digits of a row's md5 read as its integer: 56 bits, summed exactly per cell."""


@dataclass(frozen=True)
class Rules:
    """How values are normalised before hashing.

    `float_tolerance` (absolute) is the grid step floats are hashed on; decimals are exact.
    """

    float_tolerance: float = 1e-6
    trim_trailing_spaces: bool = True

    def __post_init__(self) -> None:
        tolerance = self.float_tolerance
        if not (isinstance(tolerance, (int, float)) and 0 < tolerance < float("inf")):
            raise ValueError(f"float_tolerance must be a positive finite number, not {tolerance!r}")


_SPARK_KINDS: tuple[tuple[type[T.DataType], Kind], ...] = (
    (T.BooleanType, "boolean"),
    (T.ByteType, "integer"),
    (T.ShortType, "integer"),
    (T.IntegerType, "integer"),
    (T.LongType, "integer"),
    (T.DecimalType, "decimal"),
    (T.FloatType, "float"),
    (T.DoubleType, "float"),
    (T.StringType, "text"),
    (T.DateType, "date"),
    (T.TimestampNTZType, "timestamp"),
    (T.TimestampType, "timestamp_tz"),
)


def kind_of_spark(data_type: T.DataType) -> Kind:
    for spark_type, kind in _SPARK_KINDS:
        if isinstance(data_type, spark_type):
            return kind
    raise ValueError(f"Spark type {data_type.simpleString()} cannot be compared across stores")


def kind_of_sql(sql_type: sa.types.TypeEngine[object]) -> Kind:
    """The kind of a reflected column type (MariaDB's BOOLEAN is reflected as TINYINT(1))."""
    if isinstance(sql_type, mysql.TINYINT) and sql_type.display_width == 1:
        return "boolean"
    if isinstance(sql_type, sa.Boolean):
        return "boolean"
    if isinstance(sql_type, sa.Integer):
        return "integer"
    if isinstance(sql_type, sa.Float):  # before Numeric: Float is a Numeric
        return "float"
    if isinstance(sql_type, sa.Numeric):
        return "decimal"
    if isinstance(sql_type, sa.String):
        return "text"
    if isinstance(sql_type, sa.DateTime):
        instant = isinstance(sql_type, mysql.TIMESTAMP) or bool(sql_type.timezone)
        return "timestamp_tz" if instant else "timestamp"
    if isinstance(sql_type, sa.Date):
        return "date"
    raise ValueError(f"SQL type {sql_type!r} cannot be compared across stores")


# --- SQL ---------------------------------------------------------------------------------------


def _pg_float(v: str, t: str) -> str:
    e0 = f"floor(ln(abs({v})) / ln(2.0::float8))"
    ratio = f"(abs({v}) / power(2.0::float8, {e0}))"
    e = (
        f"({e0} - CASE WHEN {ratio} < 1 THEN 1 ELSE 0 END"
        f" + CASE WHEN {ratio} >= 2 THEN 1 ELSE 0 END)"
    )
    exact = (
        f"CAST({e} AS BIGINT)::text || 'p'"
        f" || CAST({v} / power(2.0::float8, {e} - 52) AS BIGINT)::text"
    )
    return (
        f"CASE WHEN {v} = 'NaN'::float8 THEN 'nan' WHEN {v} = 'Infinity'::float8 THEN 'inf'"
        f" WHEN {v} = '-Infinity'::float8 THEN '-inf'"
        f" WHEN abs({v} / {t}) < {GRID_LIMIT!r}::float8"
        f" THEN CAST(floor({v} / {t} + 0.5) AS BIGINT)::text"
        f" ELSE {exact} END"
    )


def _mysql_float(v: str, t: str) -> str:
    # MariaDB stores no NaN nor infinities.
    e0 = f"FLOOR(LOG2(ABS({v})))"
    ratio = f"(ABS({v}) / POW(2e0, {e0}))"
    e = (
        f"({e0} - CASE WHEN {ratio} < 1 THEN 1 ELSE 0 END"
        f" + CASE WHEN {ratio} >= 2 THEN 1 ELSE 0 END)"
    )
    exact = f"CONCAT(CAST({e} AS SIGNED), 'p', CAST({v} / POW(2e0, {e} - 52) AS SIGNED))"
    return (
        f"CASE WHEN ABS({v} / {t}) < {GRID_LIMIT!r}"
        f" THEN CAST(CAST(FLOOR({v} / {t} + 0.5e0) AS SIGNED) AS CHAR)"
        f" ELSE {exact} END"
    )


def _strip_zeros_mysql(s: str) -> str:
    stripped = f"TRIM(TRAILING '.' FROM TRIM(TRAILING '0' FROM {s}))"
    return f"CASE WHEN LOCATE('.', {s}) > 0 THEN {stripped} ELSE {s} END"


def sql_text(dialect: str, column_sql: str, kind: Kind, rules: Rules) -> str:
    """An SQL expression: the canonical text of `column_sql` (already quoted); NULL stays NULL.

    No expression contains a '%', so they are safe in drivers' pyformat queries."""
    c = column_sql
    t = repr(float(rules.float_tolerance))
    if dialect == "postgresql":
        texts = {
            "integer": f"CAST({c} AS TEXT)",
            "decimal": f"CAST(trim_scale(CAST({c} AS NUMERIC)) AS TEXT)",
            "float": _pg_float(f"CAST({c} AS DOUBLE PRECISION)", f"{t}::float8"),
            "text": f"rtrim(CAST({c} AS TEXT), ' ')"
            if rules.trim_trailing_spaces
            else f"CAST({c} AS TEXT)",
            "boolean": f"CASE WHEN {c} THEN '1' WHEN NOT {c} THEN '0' END",
            "date": f"CAST({c} AS TEXT)",  # ISO: prepare_connection sets DateStyle
            "timestamp": f"to_char({c}, 'YYYY-MM-DD HH24:MI:SS.US')",
            "timestamp_tz": f"to_char({c} AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US')",
        }
    elif dialect in ("mysql", "mariadb"):
        text = f"CONVERT({c} USING utf8mb4)"
        texts = {
            "integer": f"CAST({c} AS CHAR)",
            "decimal": _strip_zeros_mysql(f"CAST({c} AS CHAR)"),
            "float": _mysql_float(f"CAST({c} AS DOUBLE)", t),
            "text": f"TRIM(TRAILING ' ' FROM {text})" if rules.trim_trailing_spaces else text,
            "boolean": f"CAST({c} AS CHAR)",
            "date": f"CAST(CAST({c} AS DATE) AS CHAR)",
            # TIMESTAMP is rendered in the session time zone, which prepare_connection sets to UTC.
            "timestamp": f"CAST(CAST({c} AS DATETIME(6)) AS CHAR)",
            "timestamp_tz": f"CAST(CAST({c} AS DATETIME(6)) AS CHAR)",
        }
    elif dialect == "sqlite":
        texts = {
            "integer": f"CAST({c} AS TEXT)",
            "decimal": f"dq_decimal_text({c})",
            "float": f"dq_float_text({c}, {t})",
            "text": f"rtrim(CAST({c} AS TEXT), ' ')"
            if rules.trim_trailing_spaces
            else f"CAST({c} AS TEXT)",
            "boolean": f"CAST({c} AS TEXT)",
            "date": f"dq_date_text({c})",
            "timestamp": f"dq_timestamp_text({c})",
            "timestamp_tz": f"dq_timestamp_text({c})",
        }
    else:
        raise ValueError(f"unsupported dialect {dialect!r}: use one of {', '.join(DIALECTS)}")
    return texts[kind]


def sql_digest(dialect: str, texts: Sequence[str], text_kinds: Sequence[bool]) -> str:
    """The md5 (hex) of the row's encoding: its parts joined by SEPARATOR, a part per value and,
    before a text's value, its UTF-8 length (`-` for NULL); a NULL value is an empty part.
    `text_kinds` says which of `texts` are of kind text; their expressions appear twice, so give
    column names of a subquery that computed them, or expressions cheap enough to repeat."""
    if dialect == "postgresql":
        length, wrap = "octet_length({t})::text", "md5({})"
    elif dialect in ("mysql", "mariadb"):
        length, wrap = "CAST(OCTET_LENGTH({t}) AS CHAR)", "MD5(CONVERT({} USING utf8mb4))"
    elif dialect == "sqlite":
        length, wrap = "CAST(length(CAST({t} AS BLOB)) AS TEXT)", "dq_md5({})"
    else:
        raise ValueError(f"unsupported dialect {dialect!r}: use one of {', '.join(DIALECTS)}")
    parts = [
        f"coalesce({part}, {_empty_or_null(part_kind)})"
        for t, is_text in zip(texts, text_kinds, strict=True)
        for part, part_kind in _parts(t, is_text, length.format(t=t))
    ]
    if not parts:
        return wrap.format(EMPTY)
    if dialect == "sqlite":  # no concat_ws
        return wrap.format(f" || '{SEPARATOR}' || ".join(parts))
    return wrap.format(f"concat_ws('{SEPARATOR}', {', '.join(parts)})")


def _parts(text: str, is_text: bool, length: str) -> list[tuple[str, str]]:
    return [(length, "length"), (text, "value")] if is_text else [(text, "value")]


def _empty_or_null(part: str) -> str:
    return f"'{NULL_LENGTH}'" if part == "length" else EMPTY


def sql_row_number(dialect: str, digest: str) -> str:
    """The row's integer in [0, 2**56): the first 14 hex digits of its digest."""
    if dialect == "postgresql":
        return f"('x' || substr({digest}, 1, {SUM_DIGITS}))::bit({4 * SUM_DIGITS})::bigint"
    if dialect in ("mysql", "mariadb"):
        return f"CAST(CONV(SUBSTRING({digest}, 1, {SUM_DIGITS}), 16, 10) AS UNSIGNED)"
    if dialect == "sqlite":
        return f"dq_hex_int(substr({digest}, 1, {SUM_DIGITS}))"
    raise ValueError(f"unsupported dialect {dialect!r}: use one of {', '.join(DIALECTS)}")


def sql_position(dialect: str, digest: str) -> str:
    """A hashed key's position in [0, 2**56): the first 14 hex digits of its digest, signed."""
    if dialect in ("mysql", "mariadb"):
        return f"CAST(CONV(SUBSTRING({digest}, 1, {SUM_DIGITS}), 16, 10) AS SIGNED)"
    return sql_row_number(dialect, digest)


def sql_checksum(dialect: str, digest: str) -> str:
    """An aggregate: the exact sum of the rows' integers (PostgreSQL and MariaDB sum BIGINTs into
    NUMERIC/DECIMAL; SQLite, whose sum() stops at 2**63, gets an exact Python aggregate)."""
    total = "dq_exact_sum" if dialect == "sqlite" else "sum"
    return f"{total}({sql_row_number(dialect, digest)})"


#: Session settings the expressions rely on, per dialect (SQLite gets functions instead).
SESSION_SETTINGS = {
    "postgresql": ("SET TimeZone TO 'UTC'", "SET DateStyle TO 'ISO'"),
    "mysql": ("SET time_zone = '+00:00'",),
    "mariadb": ("SET time_zone = '+00:00'",),
}


def prepare_connection(dialect: str, dbapi_connection: object) -> None:
    """Session settings the expressions rely on; call it from a SQLAlchemy "connect" event."""
    if dialect == "sqlite":
        for name, (arity, function) in SQLITE_FUNCTIONS.items():
            dbapi_connection.create_function(name, arity, function, deterministic=True)  # type: ignore[attr-defined]
        dbapi_connection.create_aggregate("dq_exact_sum", 1, ExactSum)  # type: ignore[attr-defined]
        return
    statements = SESSION_SETTINGS.get(dialect)
    if statements is None:
        raise ValueError(f"unsupported dialect {dialect!r}: use one of {', '.join(DIALECTS)}")
    cursor = dbapi_connection.cursor()  # type: ignore[attr-defined]
    try:
        for statement in statements:
            cursor.execute(statement)
    finally:
        cursor.close()
    # A SET inside a transaction that is rolled back is undone (PostgreSQL).
    dbapi_connection.commit()  # type: ignore[attr-defined]


# --- Spark -------------------------------------------------------------------------------------


def _spark_float(v: Column, tolerance: float) -> Column:
    t = F.lit(tolerance)
    e0 = F.floor(F.log2(F.abs(v)))
    ratio = F.abs(v) / F.pow(F.lit(2.0), e0)
    e = e0 - F.when(ratio < 1, 1).otherwise(0) + F.when(ratio >= 2, 1).otherwise(0)
    exact = F.concat(
        e.cast("long").cast("string"),
        F.lit("p"),
        (v / F.pow(F.lit(2.0), e - 52)).cast("long").cast("string"),
    )
    return (
        F.when(F.isnan(v), F.lit("nan"))
        .when(v == F.lit(float("inf")), F.lit("inf"))
        .when(v == F.lit(float("-inf")), F.lit("-inf"))
        .when(F.abs(v / t) < F.lit(GRID_LIMIT), F.floor(v / t + 0.5).cast("long").cast("string"))
        .otherwise(exact)
    )


def _spark_instant(c: Column) -> Column:
    """An instant as UTC text, whatever spark.sql.session.timeZone is (from epoch microseconds)."""
    micros = F.unix_micros(c)
    day = F.lit(86_400_000_000)
    rest = F.pmod(micros, day)
    days = F.round((micros - rest) / day).cast("int")
    return F.concat(
        F.date_from_unix_date(days).cast("string"),
        F.format_string(
            " %02d:%02d:%02d.%06d",
            F.floor(rest / F.lit(3_600_000_000)),
            F.floor(F.pmod(rest, F.lit(3_600_000_000)) / F.lit(60_000_000)),
            F.floor(F.pmod(rest, F.lit(60_000_000)) / F.lit(1_000_000)),
            F.pmod(rest, F.lit(1_000_000)),
        ),
    )


def spark_text(column: Column, kind: Kind, rules: Rules) -> Column:
    """A string Column with the canonical text of `column`; null stays null."""
    c = column
    texts: dict[Kind, Callable[[], Column]] = {
        "integer": lambda: c.cast("string"),
        "decimal": lambda: F.when(
            c.cast("string").contains("."), F.regexp_replace(c.cast("string"), r"\.?0+$", "")
        ).otherwise(c.cast("string")),
        "float": lambda: _spark_float(c.cast("double"), float(rules.float_tolerance)),
        "text": lambda: (
            F.rtrim(c.cast("string")) if rules.trim_trailing_spaces else c.cast("string")
        ),
        "boolean": lambda: F.when(c, F.lit("1")).when(~c, F.lit("0")),
        "date": lambda: F.date_format(c, "yyyy-MM-dd"),
        "timestamp": lambda: F.date_format(c, "yyyy-MM-dd HH:mm:ss.SSSSSS"),
        "timestamp_tz": lambda: _spark_instant(c),
    }
    return texts[kind]()


def spark_digest(texts: Sequence[Column], text_kinds: Sequence[bool]) -> Column:
    """The md5 (hex) of the row's encoding (select the texts first: a text is used twice)."""
    parts = [
        F.coalesce(
            part.cast("string"),
            F.lit(NULL_LENGTH if kind == "length" else ""),
        )
        for t, is_text in zip(texts, text_kinds, strict=True)
        for part, kind in _spark_parts(t, is_text)
    ]
    return F.md5(F.concat_ws(SEPARATOR, *parts) if parts else F.lit(""))


def _spark_parts(text: Column, is_text: bool) -> list[tuple[Column, str]]:
    return [(F.octet_length(text), "length"), (text, "value")] if is_text else [(text, "value")]


def spark_halves(digest: Column) -> tuple[Column, Column]:
    """The row's integer (`sql_row_number`) as two long Columns, its high and low 28 bits: sums
    of each stay far below 2**63 (Spark's ANSI sum raises on overflow); `exact_checksum` joins
    the two sums."""
    half = SUM_DIGITS // 2
    first, second = (
        F.conv(F.substring(digest, start, half), 16, 10).cast("long") for start in (1, 1 + half)
    )
    return first, second


def spark_position(digest: Column) -> Column:
    """`sql_position` in Spark: a long Column."""
    return F.conv(F.substring(digest, 1, SUM_DIGITS), 16, 10).cast("long")


def exact_checksum(high_sum: int, low_sum: int) -> int:
    """The sum of the rows' integers from the sums of their halves (`spark_halves`)."""
    return high_sum * 2 ** (4 * (SUM_DIGITS // 2)) + low_sum
