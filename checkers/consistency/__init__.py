"""Cross-store consistency: two sources compared by key with the work pushed into each engine
(row counts and order-independent checksums per key range, split where they differ), so only the
rows of small differing ranges ever leave a database."""

from checkers.consistency.checker import ConsistencyChecker
from checkers.consistency.sql_side import SqlTable

__all__ = ["ConsistencyChecker", "SqlTable"]
