"""`CatalogDatabase`: every table of a Spark catalog database (the session catalog's `sales`,
tables saved with `saveAsTable`), found anew on every run with one `SHOW TABLE EXTENDED` (a
catalog command: no Spark job), each table's history read from its location as a lake root's
would be: Parquet tables from their file listing and footers, Delta tables from their log.
Views are no tables; a table whose provider keeps no such metadata (JDBC, CSV) is a finding."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from checkers.errors import describe_failure
from checkers.table_monitor.history import TableHistory
from checkers.table_monitor.lake import _file_system, _parquet_files
from checkers.table_monitor.lake_histories import delta_history, parquet_history

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: Providers whose files the monitor reads metadata of.
PROVIDERS = ("parquet", "delta")


def _quoted(name: str) -> str:
    return ".".join(f"`{part.replace('`', '``')}`" for part in name.split("."))


def _details(information: str) -> dict[str, str]:
    """The `Key: value` lines of SHOW TABLE EXTENDED's `information` (the schema tree below them
    is left out)."""
    found: dict[str, str] = {}
    for line in information.splitlines():
        key, sep, value = line.partition(": ")
        if sep and not key.startswith((" ", "|")):
            found.setdefault(key, value)
    return found


def _location(uri: str) -> str:
    """A table location as pyarrow's file systems take it (`file:/x` is the local path /x)."""
    parts = urlsplit(uri)
    if parts.scheme in ("", "file"):
        return unquote(parts.path)
    return uri.replace("s3a://", "s3://", 1) if parts.scheme == "s3a" else uri


@dataclass(frozen=True)
class CatalogDatabase:
    """Every table of `database` in the Spark catalog `catalog` (the session catalog by default),
    named `database.table`, read through `spark` (the active session when not given).

    >>> TableMonitor(CatalogDatabase("sales"), now=self.now)
    """

    database: str
    catalog: str = "spark_catalog"
    spark: SparkSession | None = field(default=None, compare=False, repr=False)

    def describe(self) -> str:
        return f"tables of {self.catalog}.{self.database}"

    def histories(self) -> list[TableHistory]:
        from pyspark.sql import SparkSession

        session = self.spark or SparkSession.active()
        listed = session.sql(
            f"SHOW TABLE EXTENDED IN {_quoted(f'{self.catalog}.{self.database}')} LIKE '*'"
        ).collect()
        found = []
        for row in sorted(listed, key=lambda r: r.tableName):
            details = _details(row.information)
            if row.isTemporary or details.get("Type", "").upper() == "VIEW":
                continue
            found.append(self._history(f"{self.database}.{row.tableName}", details))
        return found

    def _history(self, name: str, details: dict[str, str]) -> TableHistory:
        provider = details.get("Provider", "").lower()
        location = details.get("Location", "")
        if provider not in PROVIDERS or not location:
            return TableHistory(
                name,
                location or name,
                problem=f"provider {provider or 'unknown'} keeps no file metadata a monitor reads "
                f"(it reads {', '.join(PROVIDERS)} tables); watch it with a check of its own",
            )
        try:
            if provider == "delta":
                return delta_history(name, _location(location), {})
            fs, path = _file_system(_location(location))
            return parquet_history(name, path, fs, _parquet_files(fs, path))
        except Exception as exc:  # one unreadable table is that table's finding
            return TableHistory(name, location, problem=describe_failure(exc))
