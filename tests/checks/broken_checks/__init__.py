"""A check package as a careless team might ship it: good checks beside at least 20 kinds of
broken definitions and a module with a syntax error (see tests/scheduling/test_isolation.py).
Every check fires hourly; their data is built in memory."""

from __future__ import annotations

from checkers.parsers import CallableParser

ROWS = [(1, 10.0, "k1"), (2, 20.0, "k2"), (3, 150.0, "k3")]


def _rows(spark):  # type: ignore[no-untyped-def]
    return spark.createDataFrame(ROWS, "id int, amount double, `a.b` string")


#: Three rows; a column literally named `a.b`; one amount (150, key k3) over 100.
SOURCE = CallableParser(_rows, name="broken_checks rows")
