"""dq-checkers: checker classes, tolerances, alert levels, parsers and the metrics engine."""

from checkers.spark import spark_session, spark_target

__all__ = ["spark_session", "spark_target"]
