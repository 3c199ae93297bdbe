"""dq-checkers: checker classes, tolerances, alert levels, parsers and the metrics engine."""

from checkers.spark import spark_session

__all__ = ["spark_session"]
