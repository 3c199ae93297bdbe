"""A `JdbcParser` as a side of a comparison: its table or query is compared inside its database.
Each question is one SQL statement read through Spark's JDBC source (the `query` option), with
the parser's credentials and deadline, so only counts, checksums and the rows of small ranges
leave the database, never the table."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from pyspark.sql import SparkSession

from checkers.consistency import normalise
from checkers.consistency.normalise import Kind
from checkers.consistency.sides import KeyPlan, Unsupported
from checkers.consistency.sql_questions import SqlQuestions
from checkers.parsers._base import SourceError
from checkers.parsers.jdbc import JdbcParser


class JdbcSide(SqlQuestions):
    """The rows a `JdbcParser` reads, compared where they live (PostgreSQL, MariaDB/MySQL).

    Each statement costs Spark's JDBC source three connections (the schema when the read is
    defined, again at its first action, then the rows), so questions are saved: whether the key
    is unique comes with the bounds (the data's, not a constraint's) rather than from a search
    for duplicates."""

    counts_distinct = True

    def __init__(self, parser: JdbcParser, role: str) -> None:
        super().__init__()
        self.parser = parser
        self.role = role
        #: The session whose JDBC source carries the statements (set by the checker).
        self.spark: SparkSession | None = None

    def describe(self) -> str:
        return self.parser.describe()

    @contextmanager
    def session(self) -> Iterator[None]:
        if self.spark is None:
            self.spark = SparkSession.getActiveSession()
        yield

    @property
    def _dialect(self) -> str:
        return self.parser.dialect

    def _quote(self, name: str) -> str:
        return self.parser.quote(name)

    def _source(self) -> str:
        return self.parser.relation()

    def _condition(self) -> str | None:
        return None

    def _read(self, statement: str, **options: str) -> Any:
        assert self.spark is not None, "the checker sets the session"
        settings = normalise.SESSION_SETTINGS[self._dialect]
        return self.parser.read_query(
            self.spark, statement, session_init="; ".join(settings), options=options
        )

    def _execute(self, statement: str) -> list[Sequence[Any]]:
        frame = self._read(statement)
        self.queries += 1
        try:
            return [tuple(row) for row in frame.collect()]
        except SourceError:
            raise
        except Exception as exc:
            raise self.parser.failure(exc) from exc

    def has_unique_key(self, key: KeyPlan) -> bool:
        return self.unique_in_data

    def kinds(self) -> dict[str, Kind]:
        # The schema only: Spark asks the database for it with a query that reads no row. With
        # NTZ preferred, Spark's types say what kind_of_sql says (DATETIME is no instant).
        statement = f"SELECT * FROM {self._source()}"
        schema = self._read(statement, preferTimestampNTZ="true").schema
        found: dict[str, Kind] = {}
        for item in schema.fields:
            try:
                found[item.name] = normalise.kind_of_spark(item.dataType)
            except ValueError as exc:
                found[item.name] = Unsupported(str(exc))  # type: ignore[assignment]
        return found
