"""Data values out of error text. Record dumps of malformed input are always withheld (they hold
whole rows); for checks with masked columns, every quoted or cast value is withheld too."""

from __future__ import annotations

import re

import sqlalchemy as sa

WITHHELD = "***"
RECORD_WITHHELD = "<record withheld>"

# Spark quotes a whole input row in these messages; the row may run over several lines.
_RECORD_DUMPS = (
    # [MALFORMED_RECORD_IN_PARSING] ... detected in record parsing: [2,alice@example.com,null].
    re.compile(r"(detected in record parsing: ).*?(?=\.?\s*Parse Mode: |\Z)", re.DOTALL),
    # [MALFORMED_CSV_RECORD] Malformed CSV record: 2,"alice@example.com,40 SQLSTATE: KD000
    re.compile(
        r"(Malformed CSV record: ).*?(?= SQLSTATE: |\n\s*at |\n\s*\.\.\. \d+ more|\Z)", re.DOTALL
    ),
    # Jackson: at [Source: (String)"{"email": "alice@example.com", ...; line: 1, column: 46]
    re.compile(r"(\[Source: ).*?(?=; line: |\Z)", re.DOTALL),
)
# NumberFormatException and friends quote the field that failed to parse.
_INPUT_STRING = re.compile(
    r'(For input string: )".*?"(?=(?: under radix \d+)?\s*(?:\n|\Z))', re.DOTALL
)


def redact_records(text: str) -> str:
    """`text` without the input records Spark quotes when it cannot parse a row (CSV, JSON),
    nor the field a number parser rejected. The error class and message stay."""
    for pattern in _RECORD_DUMPS:
        text = pattern.sub(lambda m: m.group(1) + RECORD_WITHHELD, text)
    return _INPUT_STRING.sub(lambda m: f'{m.group(1)}"{WITHHELD}"', text)


# Double-quoted words Spark uses for types and settings, not for data: kept, so the message
# still says "cannot be cast to INT" or which setting to change.
_TYPE = (
    r"(?:STRING|(?:VAR)?CHAR\(\d+\)|(?:TINY|SMALL|BIG)?INT|INTEGER|BYTE|SHORT|LONG|FLOAT|DOUBLE"
    r"|REAL|(?:DECIMAL|NUMERIC)(?:\(\d+,\s*\d+\))?|BOOLEAN|DATE|TIME|TIMESTAMP(?:_NTZ|_LTZ)?"
    r"|BINARY|VOID|VARIANT|INTERVAL(?: [A-Z]+(?: TO [A-Z]+)?)?|(?:ARRAY|MAP|STRUCT)<[^\"']*>)"
)
_SPARK_WORD = re.compile(rf"{_TYPE}|spark\.[\w.]+|true|false")
# A quote inside a value (O'Brien) is followed by a letter; a closing quote is not.
_SINGLE_QUOTED = re.compile(r"(?<![\w'])'(?:[^'\\]|\\.|'(?=\w))*'(?!\w)", re.DOTALL)
_DOUBLE_QUOTED = re.compile(r'(?<![\w"])"((?:[^"\\]|\\.|"(?=\w))*)"(?!\w)', re.DOTALL)
# Values however quoted: "The value 12345678901L of the type ..." (CAST_OVERFLOW and the like),
# "Text '31/02' could not be parsed" (CANNOT_PARSE_TIMESTAMP) and
# "12345.6 cannot be represented as Decimal(4, 2)" (NUMERIC_VALUE_OUT_OF_RANGE).
_VALUES_IN_CONTEXT = (
    re.compile(r"(\bThe value ).*?(?= of the type )", re.DOTALL),
    re.compile(r"(\bText ).*?(?= could not be parsed)", re.DOTALL),
    re.compile(r"()\S+(?= cannot be represented as )"),
)


def redact_values(text: str) -> str:
    """`text` with every value that could come from the data withheld: record dumps, quoted
    literals ('...' and "...", except Spark's type names and settings), and the unquoted values
    of cast and range errors.

    Used for checks with masked columns. Telling which quoted value came from a masked column
    is impossible in general (a cast error names neither the column nor the row, a Python
    exception is free text), so every value is withheld: the error class and the wording that
    say what went wrong stay. Free text that quotes nothing cannot be recognised."""
    text = redact_records(text)
    for pattern in _VALUES_IN_CONTEXT:
        text = pattern.sub(lambda m: m.group(1) + WITHHELD, text)
    text = _SINGLE_QUOTED.sub(f"'{WITHHELD}'", text)
    return _DOUBLE_QUOTED.sub(
        lambda m: m.group(0) if _SPARK_WORD.fullmatch(m.group(1)) else f'"{WITHHELD}"', text
    )


def redact_url(url: str) -> str:
    """A SQLAlchemy URL without its password (or a placeholder when it does not parse)."""
    try:
        return sa.engine.make_url(url).render_as_string(hide_password=True)
    except Exception:
        return "<database url>"
