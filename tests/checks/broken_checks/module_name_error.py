"""A typo at module level: NameError while importing, outside any class body."""

from __future__ import annotations

from checkers.parsers import CallableParser

ORDERS = CallableParser(lambda spark: spark.range(3))
LATE_ORDERS = ORDRES  # noqa: F821
