"""`IcebergNamespace`: every table of an Iceberg namespace, its arrivals the table's snapshots
(compactions, `replace`, are no load), their rows the snapshots' `added-records`, its schema
change the current schema against the one the previous snapshot was written with."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from checkers.errors import describe_failure
from checkers.parsers._base import Lazy, resolve
from checkers.parsers.iceberg import load_catalog
from checkers.table_monitor.history import Arrival, TableHistory
from checkers.table_monitor.lake_histories import schema_change_lines


def _arrivals(table: Any) -> tuple[Arrival, ...]:
    found = []
    for snapshot in table.metadata.snapshots:
        summary = snapshot.summary
        if summary is not None and str(summary.operation.value) == "replace":
            continue  # files rewritten, no data added (a compaction)
        added = None if summary is None else summary.get("added-records")
        at = dt.datetime.fromtimestamp(snapshot.timestamp_ms / 1000, dt.UTC)
        found.append(Arrival(at, None if added is None else int(added)))
    return tuple(sorted(found, key=lambda a: a.at))


def _schema_changes(table: Any) -> tuple[str, ...]:
    snapshots = table.metadata.snapshots
    if len(snapshots) < 2:
        return ()
    schemas = table.schemas()
    before = schemas.get(snapshots[-2].schema_id)
    if before is None:
        return ()
    return schema_change_lines(before.as_arrow(), table.schema().as_arrow())


@dataclass(frozen=True)
class IcebergNamespace:
    """Every table of `namespace` in the pyiceberg catalog `catalog` (configured as for
    `IcebergParser`), named `namespace.table`.

    >>> TableMonitor(IcebergNamespace("sales", catalog="lake"), now=self.now)
    """

    namespace: str
    catalog: str = "default"
    catalog_properties: tuple[tuple[str, Lazy], ...] = field(default=(), kw_only=True)

    def describe(self) -> str:
        return f"Iceberg tables in {self.catalog}.{self.namespace}"

    def histories(self) -> list[TableHistory]:
        properties = {k: resolve(v) for k, v in self.catalog_properties}
        catalog = load_catalog(self.catalog, properties)
        found = []
        for identifier in sorted(catalog.list_tables(self.namespace)):
            name = ".".join(identifier)
            try:
                table = catalog.load_table(identifier)
                found.append(
                    TableHistory(
                        name,
                        str(table.location()),
                        _arrivals(table),
                        schema_changes=_schema_changes(table),
                    )
                )
            except Exception as exc:  # one unreadable table is that table's finding
                found.append(TableHistory(name, name, problem=describe_failure(exc)))
        return found
