"""Monitors for every table under a root (a lake path, a Spark catalog database, an Iceberg
namespace): freshness against each table's learned cadence, volume per load, schema changes,
from metadata alone."""

from checkers.table_monitor.cadence import Cadence, learn_cadence, volume_problem
from checkers.table_monitor.catalog_root import CatalogDatabase
from checkers.table_monitor.history import Arrival, TableHistory, TableRoot
from checkers.table_monitor.iceberg_root import IcebergNamespace
from checkers.table_monitor.lake import LakeRoot
from checkers.table_monitor.listing import TablesUnder
from checkers.table_monitor.monitor import TableMonitor, findings

__all__ = [
    "Arrival",
    "Cadence",
    "CatalogDatabase",
    "IcebergNamespace",
    "LakeRoot",
    "TableHistory",
    "TableMonitor",
    "TableRoot",
    "TablesUnder",
    "findings",
    "learn_cadence",
    "volume_problem",
]
