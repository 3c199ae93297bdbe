"""Parser for a database table or query read in parallel by Spark's JDBC source (PostgreSQL,
MariaDB/MySQL): rows go from the database to the executors, never through Python. Drivers come
from Debian's packages (checkers/jdbc_drivers.py). Secrets come from the environment only, and
never appear in descriptions or errors."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

import sqlalchemy as sa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType

from checkers.deadlines import Deadline, current, timed_out
from checkers.errors import describe_failure
from checkers.jdbc_drivers import DRIVERS
from checkers.parsers._base import Lazy, Parser, SourceError, SourceIdentity, resolve
from checkers.parsers._jdbc_causes import Target, cause

#: SQLAlchemy backends and the JDBC subprotocol that reads them.
_SUBPROTOCOLS = {"postgresql": "postgresql", "mysql": "mariadb", "mariadb": "mariadb"}
_DEFAULT_PORTS = {"postgresql": 5432, "mariadb": 3306}
_SECRET_IN_URL = re.compile(r"(password=)[^&;]*|(//)[^/@]*@", re.IGNORECASE)
_DEFAULT_PARTITIONS = 4


@dataclass(frozen=True)
class _Connection:
    url: str  # the JDBC URL, as given or translated
    subprotocol: str
    user: str | None
    password: str | None


def _jdbc(url: str) -> _Connection:
    """A JDBC URL as given, or translated from a SQLAlchemy URL (credentials kept apart)."""
    if url.startswith("jdbc:mariadb:"):
        url = _as_mysql(url)
    if url.startswith("jdbc:"):
        return _Connection(url, url.split(":", 2)[1], None, None)
    parsed = sa.engine.make_url(url)
    subprotocol = _SUBPROTOCOLS.get(parsed.get_backend_name())
    if subprotocol is None:
        raise ValueError(
            f"JdbcParser reads PostgreSQL and MariaDB/MySQL URLs, not {parsed.drivername}://"
        )
    port = parsed.port or _DEFAULT_PORTS[subprotocol]
    jdbc = f"jdbc:{subprotocol}://{parsed.host or 'localhost'}:{port}/{parsed.database or ''}"
    if subprotocol == "mariadb":
        jdbc, subprotocol = _as_mysql(jdbc), "mysql"
    return _Connection(jdbc, subprotocol, parsed.username, parsed.password)


def _as_mysql(url: str) -> str:
    """A `jdbc:mariadb:` URL as `jdbc:mysql:`, read by the MariaDB driver: Spark picks its MySQL
    dialect (backquoted identifiers, MySQL types) by that prefix only; with the generic one, a
    column name in double quotes is a string literal in MariaDB."""
    url = "jdbc:mysql:" + url.removeprefix("jdbc:mariadb:")
    return (
        url
        if "permitMysqlScheme" in url
        else url + ("&" if "?" in url else "?") + "permitMysqlScheme"
    )


def _redacted(url: str) -> str:
    return _SECRET_IN_URL.sub(lambda m: f"{m.group(1)}***" if m.group(1) else "//***@", url)


def _quote(subprotocol: str, name: str) -> str:
    if subprotocol in {"mariadb", "mysql"}:
        return "`" + name.replace("`", "``") + "`"
    return '"' + name.replace('"', '""') + '"'


@dataclass(frozen=True)
class JdbcParser(Parser):
    """Rows of `table` or of `query` read by Spark's JDBC source. `url` is a JDBC URL or a
    SQLAlchemy one (`postgresql+psycopg://user@host/db` reads as `jdbc:postgresql://...`,
    `mysql+pymysql://...` as `jdbc:mariadb://...`), or a function returning one. The password
    comes from the environment variable `password_env` (the user too, with `user_env`); a literal
    URL carrying one is refused.

    >>> JdbcParser("postgresql+psycopg://dq@db/shop", table="orders",
    ...     partition_column="order_id", num_partitions=8, password_env="SHOP_DB_PASSWORD")

    With `partition_column` (numeric, date or timestamp), `num_partitions` tasks each read one
    stride between `lower_bound` and `upper_bound`; without bounds, one min/max query finds them.
    Bounds only set the strides: every row is read exactly once. Connect, login, socket and
    query timeouts follow the source's deadline.
    """

    url: Lazy
    table: str | None = None
    query: str | None = None
    schema: str | StructType | None = None
    partition_column: str | None = field(default=None, kw_only=True)
    lower_bound: object = field(default=None, kw_only=True)
    upper_bound: object = field(default=None, kw_only=True)
    num_partitions: int | None = field(default=None, kw_only=True)
    fetch_size: int = field(default=1000, kw_only=True)
    user_env: str | None = field(default=None, kw_only=True)
    password_env: str | None = field(default=None, kw_only=True)
    #: The driver class, when not the packaged one for the URL's subprotocol.
    driver: str | None = field(default=None, kw_only=True)
    deadline_s: float | None = field(default=None, kw_only=True)
    partitioning_kind: ClassVar[None] = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if (self.table is None) == (self.query is None):
            raise ValueError("JdbcParser reads either a table or a query: give exactly one")
        if isinstance(self.url, str) and _jdbc_password(self.url):
            raise ValueError(
                "the URL carries a password: take it from the environment with password_env="
            )
        if (self.lower_bound is None) != (self.upper_bound is None):
            raise ValueError("give both lower_bound and upper_bound, or neither (derived)")
        if self.partition_column is None and (
            self.lower_bound is not None or self.num_partitions is not None
        ):
            raise ValueError("bounds and num_partitions need a partition_column")
        if self.num_partitions is not None and self.num_partitions < 1:
            raise ValueError(f"num_partitions must be at least 1: {self.num_partitions}")
        if self.fetch_size < 1:
            raise ValueError(f"fetch_size must be at least 1: {self.fetch_size}")

    def source_identity(self) -> SourceIdentity:
        if self.table:
            return SourceIdentity.of_table(self.table)
        assert self.query is not None
        return SourceIdentity.of_query(self.query, "its query's tables")

    def describe(self) -> str:
        what = f"table {self.table}" if self.table else "query"
        try:
            where = _redacted(_jdbc(resolve(self.url)).url)
        except Exception:
            where = "<database url>"
        return f"JDBC {what} on {where}"

    def read(self, spark: SparkSession) -> DataFrame:
        deadline = current(self.deadline_s)
        connection = _jdbc(resolve(self.url))
        options = self._options(connection, deadline)
        secrets = [s for s in (connection.password, options.get("password")) if s]
        try:
            source = self._relation()
            if self.partition_column is None:
                return _load(spark, {**options, "dbtable": source})
            bounds: tuple[object, object] | None = (self.lower_bound, self.upper_bound)
            if self.lower_bound is None:
                bounds = self._derived_bounds(spark, connection, options)
            if bounds is None:  # no rows (or only NULLs): nothing to split
                return _load(spark, {**options, "dbtable": source})
            return _load(
                spark,
                {
                    **options,
                    "dbtable": source,
                    "partitionColumn": self.partition_column,
                    "lowerBound": str(bounds[0]),
                    "upperBound": str(bounds[1]),
                    "numPartitions": str(self.num_partitions or _DEFAULT_PARTITIONS),
                },
            )
        except Exception as exc:
            raise SourceError(self._failure(exc, connection, deadline, secrets)) from exc

    @property
    def dialect(self) -> str:
        """The database's SQL dialect: postgresql or mysql (MariaDB too)."""
        return _jdbc(resolve(self.url)).subprotocol

    def quote(self, name: str) -> str:
        """`name` as an identifier of the database's SQL."""
        return _quote(self.dialect, name)

    def relation(self) -> str:
        """What the parser reads, as SQL a FROM clause takes: the table, or the query in
        parentheses with an alias."""
        return self._relation()

    def read_query(
        self,
        spark: SparkSession,
        statement: str,
        *,
        session_init: str | None = None,
        options: Mapping[str, str] | None = None,
    ) -> DataFrame:
        """The rows of `statement` (SQL of the database, usually over `relation()`), computed
        inside the database and read with the parser's credentials and deadline (the JDBC
        `query` option); `session_init` runs first on each connection; `options` are more of
        the JDBC source's. Failures are SourceErrors without secrets."""
        deadline = current(self.deadline_s)
        connection = _jdbc(resolve(self.url))
        given = self._options(connection, deadline) | dict(options or {}) | {"query": statement}
        if session_init:
            given["sessionInitStatement"] = session_init
        secrets = [s for s in (connection.password, given.get("password")) if s]
        try:
            return _load(spark, given)
        except Exception as exc:
            raise SourceError(self._failure(exc, connection, deadline, secrets)) from exc

    def failure(self, exc: Exception) -> SourceError:
        """An error met reading `read_query`'s rows, as a SourceError without secrets."""
        deadline = current(self.deadline_s)
        connection = _jdbc(resolve(self.url))
        options = self._options(connection, deadline)
        secrets = [s for s in (connection.password, options.get("password")) if s]
        return SourceError(self._failure(exc, connection, deadline, secrets))

    def _relation(self) -> str:
        if self.table:
            return self.table
        # On its own line: a trailing "-- comment" in the query must not swallow the parenthesis.
        assert self.query is not None
        return "(\n" + self.query.strip().rstrip(";").rstrip() + "\n) dq_query"

    def _derived_bounds(
        self, spark: SparkSession, connection: _Connection, options: dict[str, str]
    ) -> tuple[object, object] | None:
        assert self.partition_column is not None
        column = _quote(connection.subprotocol, self.partition_column)
        query = f"SELECT min({column}) AS lo, max({column}) AS hi FROM {self._relation()}"
        row = _load(spark, {**options, "query": query}).first()
        if row is None or row["lo"] is None:
            return None
        return row["lo"], row["hi"]

    def _options(self, connection: _Connection, deadline: Deadline) -> dict[str, str]:
        seconds = max(deadline.remaining(), 0.001)
        known = DRIVERS.get(connection.subprotocol)
        options = {
            "url": connection.url,
            "fetchsize": str(self.fetch_size),
            "queryTimeout": str(math.ceil(seconds)),
        }
        if driver := self.driver or (known.driver_class if known else None):
            options["driver"] = driver
        # Driver properties: the connection and every socket read give up by the deadline.
        if connection.subprotocol == "postgresql":
            whole = str(math.ceil(seconds))
            options |= {"connectTimeout": whole, "loginTimeout": whole}
            options["socketTimeout"] = str(math.ceil(seconds) + 1)
        elif connection.subprotocol in {"mariadb", "mysql"}:
            millis = math.ceil(seconds * 1000)
            options |= {"connectTimeout": str(millis), "socketTimeout": str(millis + 1000)}
        user = self._user(connection)
        password = _from_env(self.password_env) if self.password_env else connection.password
        if user:
            options["user"] = user
        if password:
            options["password"] = password
        return options

    def _user(self, connection: _Connection) -> str | None:
        return _from_env(self.user_env) if self.user_env else connection.user

    def _failure(
        self, exc: Exception, connection: _Connection, deadline: Deadline, secrets: list[str]
    ) -> str:
        reason = _redacted(describe_failure(exc))
        for secret in secrets:
            reason = reason.replace(secret, "***")
        known = DRIVERS.get(connection.subprotocol)
        driver = self.driver or (known.driver_class if known else None)
        if "ClassNotFoundException" in reason or "No suitable driver" in reason:
            if known is not None and driver == known.driver_class:
                return f"cannot read {self.describe()}: {known.missing()}"
            return (
                f"cannot read {self.describe()}: the JDBC driver "
                f"{driver or connection.subprotocol} is not on Spark's classpath: "
                "add its jar to DQ_JDBC_JARS"
            )
        if deadline.expired:
            return f"{timed_out(self.describe(), deadline.seconds)}: {reason}"
        target = Target.of(connection.url, self._user(connection), secrets[-1] if secrets else None)
        found = cause(reason, target, timeout_s=min(max(deadline.remaining(), 1.0), 10.0))
        if found is not None:
            return f"cannot read {self.describe()}: {found} ({reason})"
        return f"cannot read {self.describe()}: {reason}"


def _jdbc_password(url: str) -> bool:
    if url.startswith("jdbc:"):
        return bool(re.search(r"password=|//[^/@]*:[^/@]*@", url, re.IGNORECASE))
    try:
        return sa.engine.make_url(url).password is not None
    except Exception:
        return False


def _from_env(name: str) -> str:
    value = os.environ.get(name)
    if value is None:
        raise SourceError(f"environment variable {name} is not set")
    return value


def _load(spark: SparkSession, options: dict[str, str]) -> DataFrame:
    # Spark's JDBC source connects and resolves the schema here: failures surface at once.
    df = spark.read.format("jdbc").options(**options).load()
    df.schema  # noqa: B018 - on Spark Connect, analysis (and so the connection) is lazy
    return df
