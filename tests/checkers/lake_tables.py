"""Tiny Delta, Iceberg and plain Parquet tables of the same rows, written with deltalake,
pyiceberg (a SQL catalog on SQLite) and pyarrow, for the table-format tests."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

DAYS = [dt.date(2024, 3, d) for d in (1, 2, 3)]


def day_rows(day: dt.date, n: int = 8) -> pa.Table:
    """`n` orders of one day: ids grow with the day, every third note is NULL."""
    base = day.day * 100
    return pa.table(
        {
            "id": pa.array([base + i for i in range(n)], pa.int64()),
            "qty": pa.array([(i % 5) - 1 for i in range(n)], pa.int32()),
            "price": pa.array([Decimal(f"{i}.25") for i in range(n)], pa.decimal128(9, 2)),
            "ratio": pa.array([i / 3 for i in range(n)], pa.float64()),
            "note": pa.array([None if i % 3 == 0 else f"n{i}" for i in range(n)], pa.string()),
            "day": pa.array([day.isoformat()] * n, pa.string()),
        }
    )


def write_delta(path: Path, days: list[dt.date], **options: object) -> None:
    from deltalake import write_deltalake

    for day in days:
        write_deltalake(str(path), day_rows(day), mode="append", partition_by=["day"], **options)


def iceberg_catalog(root: Path) -> tuple[object, dict[str, str]]:
    from pyiceberg.catalog.sql import SqlCatalog

    properties = {
        "type": "sql",
        "uri": f"sqlite:///{root / 'catalog.db'}",
        "warehouse": f"file://{root}",
    }
    root.mkdir(parents=True, exist_ok=True)
    catalog = SqlCatalog("lake", **{k: v for k, v in properties.items() if k != "type"})
    return catalog, properties


def write_iceberg(catalog: object, name: str, days: list[dt.date]) -> object:
    namespace = name.split(".")[0]
    if (namespace,) not in catalog.list_namespaces():  # type: ignore[attr-defined]
        catalog.create_namespace(namespace)  # type: ignore[attr-defined]
    table = catalog.create_table(name, schema=day_rows(days[0]).schema)  # type: ignore[attr-defined]
    for day in days:
        table.append(day_rows(day))
    return table


def write_parquet(path: Path, days: list[dt.date]) -> None:
    path.mkdir(parents=True, exist_ok=True)
    for day in days:
        pq.write_table(day_rows(day), path / f"orders-{day.isoformat()}.parquet")
