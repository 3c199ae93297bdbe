"""Parser for a SQL query through SQLAlchemy (any database it reaches: SQLite, PostgreSQL,
MariaDB...). Values go in as bound parameters, never into the query text."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

import sqlalchemy as sa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType

from checkers.deadlines import current, timed_out
from checkers.parsers._base import Lazy, Parser, SourceError, resolve
from checkers.parsers._records import records_frame
from checkers.parsers._sql_timeouts import engine_within


def _redacted(url: str) -> str:
    try:
        return sa.engine.make_url(url).render_as_string(hide_password=True)
    except Exception:
        return "<database url>"


@dataclass(frozen=True)
class SqlQueryParser(Parser):
    """Rows of `query` (with `:name` placeholders bound from `params`) as a DataFrame. `url` is a
    SQLAlchemy URL or a function returning one (read secrets from the environment there). The
    result is collected through the driver: meant for operational queries and aggregates, not for
    bulk extraction. Promise a `schema` to fix column types. Connect and statement timeouts
    follow the source's deadline on PostgreSQL, MariaDB/MySQL and SQLite.

    >>> SqlQueryParser(lambda: os.environ["OPS_DB_URL"],
    ...     "SELECT max(ingested_at) AS latest FROM flights WHERE origin = :origin",
    ...     params=(("origin", "JFK"),), schema="latest timestamp")
    """

    url: Lazy
    query: str
    params: tuple[tuple[str, object], ...] = field(default=())
    schema: str | StructType | None = None
    deadline_s: float | None = field(default=None, kw_only=True)
    casts_to_promise: ClassVar[bool] = True

    def __post_init__(self) -> None:
        super().__post_init__()
        if isinstance(self.params, Mapping):
            object.__setattr__(self, "params", tuple(sorted(self.params.items())))

    def read(self, spark: SparkSession) -> DataFrame:
        url = resolve(self.url)
        deadline = current(self.deadline_s)
        engine = engine_within(url, deadline)
        try:
            with engine.connect() as connection:
                result = connection.execute(sa.text(self.query), dict(self.params))
                columns = list(result.keys())
                records = [dict(row._mapping) for row in result]
        except sa.exc.SQLAlchemyError as exc:
            reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
            if deadline.expired:
                message = timed_out(self.describe(), deadline.seconds)
                raise SourceError(f"{message}: {reason}") from exc
            raise SourceError(f"query on {_redacted(url)} failed: {reason}") from exc
        finally:
            engine.dispose()
        return records_frame(spark, records, columns, self.schema)

    def describe(self) -> str:
        return f"SQL query on {_redacted(resolve(self.url))}"
