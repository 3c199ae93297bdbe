"""What went wrong, in one line a person can act on: Spark's and the JVM's failures without their
stack traces, data values withheld. Every error outcome's reason passes through here."""

from __future__ import annotations

import itertools
import re

from checkers.redaction import redact_records
from checkers.shipping import explain_worker_error


def _short(line: str) -> str:
    """`org.apache.spark.SparkException: [X] msg` -> `SparkException: [X] msg`."""
    name, sep, message = line.strip().partition(": ")
    if sep and re.fullmatch(r"[\w.$]+", name):
        return f"{name.rsplit('.', 1)[-1]}{sep}{message}"
    return line.strip()


def _python_worker_error(text: list[str]) -> str | None:
    python_lines = []
    for line in text[1:]:
        if line.startswith(("\tat ", "JVM stacktrace")):
            break
        python_lines.append(line)
    raised = [line for line in python_lines if re.match(r"^[A-Za-z_.]*(Error|Exception)\b", line)]
    return explain_worker_error(f"{text[0]} {raised[-1]}") if raised else None


_PARQUET_MISMATCH = re.compile(
    r"reading file (?P<file>\S+?)\. Data type mismatches when reading Parquet column "
    r"\[(?P<column>[^\]]+)\]\. Expected Spark type (?P<expected>\S+), actual Parquet type "
    r"(?P<actual>\S+?)\."
)


def _partitions_disagree(message: str) -> str | None:
    """Files (usually partitions) of one source whose types of a column disagree: the file, its
    partition directories and the column, instead of Spark's conversion error."""
    found = _PARQUET_MISMATCH.search(message)
    if found is None:
        return None
    path = found["file"]
    partition = "/".join(part for part in path.split("/")[:-1] if "=" in part)
    where = f"partition {partition} ({path})" if partition else path
    return (
        f"the partitions disagree on column '{found['column']}': {where} holds it as "
        f"{found['actual']}, the schema read from the other files says {found['expected']}; "
        "rewrite that partition, or read with a schema that casts it"
    )


# a SQL or Column predicate that is not boolean: NULL counts as failing, so it is coalesced with
# false, and Spark refuses to coalesce another type with a boolean
_NOT_BOOLEAN = re.compile(
    r'Cannot resolve "coalesce\((?P<predicate>.+?), false\)" due to data type mismatch: '
    r'Input to `coalesce` should all be the same type, but it\'s \("(?P<type>[^"]+)" or "BOOLEAN"\)'
)


def _not_boolean(message: str) -> str | None:
    """A predicate of another type than boolean, named with its type."""
    found = _NOT_BOOLEAN.search(message)
    if found is None:
        return None
    return (
        f"the predicate {found['predicate']} is {found['type']}, not BOOLEAN: a predicate must "
        "be true or false for each row; write a comparison (e.g. `amount > 0`)"
    )


def describe_failure(exc: Exception) -> str:
    """What went wrong, without the JVM stack trace: Spark's message; for a failed job, the Spark
    cause and the root cause (a malformed record, a bad cast); for an error in a Python worker,
    the Python exception line. Works on classic Spark and Spark Connect messages alike."""
    text = redact_records(str(exc)).strip().splitlines()  # never a row of data in a message
    if not text:
        return type(exc).__name__
    if "Python worker" in text[0] and (python := _python_worker_error(text)):
        return python
    if disagreement := _partitions_disagree(" ".join(text[:3])):
        return disagreement
    if not_boolean := _not_boolean(" ".join(text[:3])):
        return not_boolean
    calling = text[0].startswith("An error occurred while calling") and len(text) > 1
    causes = [text[1].lstrip(": ") if calling else text[0]]
    for n, line in enumerate(text):
        if line.startswith("Caused by: "):
            more = itertools.takewhile(
                lambda x: not x.startswith(("\tat ", "Caused by", "\t...")), text[n + 1 : n + 6]
            )
            causes.append(" ".join([line.split("Caused by: ", 1)[1], *map(str.strip, more)]))
    if len(causes) == 1:
        return _short(causes[0])
    spark = [c for c in causes if "[" in c and "]" in c]  # Spark errors carry an error class
    chosen = list(dict.fromkeys([spark[-1] if spark else causes[0], causes[-1]]))
    return "; caused by ".join(_short(c) for c in chosen)
