"""Tiny Delta, Iceberg and plain Parquet tables of the same rows, written with deltalake,
pyiceberg (a SQL catalog on SQLite) and pyarrow, for the table-format tests; and row-level
deletes as writers that have them commit them: a Delta deletion vector, an Iceberg
position-delete file."""

from __future__ import annotations

import datetime as dt
import json
import struct
import time
import uuid
import zlib
from decimal import Decimal
from pathlib import Path
from typing import Any

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


def add_position_delete(table: Any, folder: Path, *, position: int) -> None:
    """Delete row `position` of the first data file of a one-file Iceberg table by a position-
    delete file, as a merge-on-read writer (Spark, Flink) does: pyiceberg 0.12 deletes by
    rewriting files (merge-on-read falls back to it), so the file is written here and committed
    through pyiceberg's own snapshot API."""
    import os

    from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
    from pyiceberg.typedef import Record

    target = next(iter(table.scan().plan_files())).file.file_path
    path = str(folder / f"position-deletes-{uuid.uuid4()}.parquet")
    pq.write_table(pa.table({"file_path": [target], "pos": pa.array([position], pa.int64())}), path)
    deletes = DataFile.from_args(
        content=DataFileContent.POSITION_DELETES,
        file_path=f"file://{path}",
        file_format=FileFormat.PARQUET,
        partition=Record(),
        record_count=1,
        file_size_in_bytes=os.path.getsize(path),
    )
    deletes.spec_id = 0
    with table.transaction() as tx, tx.update_snapshot().fast_append() as append:
        append.append_data_file(deletes)


def write_parquet(path: Path, days: list[dt.date]) -> None:
    path.mkdir(parents=True, exist_ok=True)
    for day in days:
        pq.write_table(day_rows(day), path / f"orders-{day.isoformat()}.parquet")


#: Z85 (ZeroMQ's base-85), which Delta uses to name a deletion vector's file by its UUID.
_Z85 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"


def _z85(data: bytes) -> str:
    letters = []
    for start in range(0, len(data), 4):
        (value,) = struct.unpack(">I", data[start : start + 4])
        group = []
        for _ in range(5):
            value, digit = divmod(value, 85)
            group.append(_Z85[digit])
        letters.extend(reversed(group))
    return "".join(letters)


def _deleted_rows_bitmap(positions: list[int]) -> bytes:
    """Delta's RoaringBitmapArray of row positions below 65,536: its magic number, one 32-bit
    bucket, and that bucket as a portable Roaring bitmap with one array container."""
    rows = sorted(positions)
    roaring = struct.pack("<IIHH", 12346, 1, 0, len(rows) - 1)  # cookie, containers, key, n-1
    roaring += struct.pack("<I", len(roaring) + 4)  # where the container's values start
    roaring += struct.pack(f"<{len(rows)}H", *rows)
    return struct.pack("<IQI", 1681511377, 1, 0) + roaring


def delete_with_deletion_vector(path: Path, positions: list[int]) -> None:
    """Delete rows of a one-file Delta table as a writer with deletion vectors does (Delta Lake
    on Spark, Databricks), which delta-rs cannot: a commit that enables the reader and writer
    feature `deletionVectors` (protocol 3/7), removes the data file and adds it back carrying
    a descriptor of the deleted `positions`, kept in a deletion-vector file beside the data."""
    log = path / "_delta_log"
    first = [json.loads(line) for line in (log / f"{0:020d}.json").read_text().splitlines()]
    metadata = next(a["metaData"] for a in first if "metaData" in a)
    adds = [
        json.loads(line)["add"]
        for commit in sorted(log.glob("*.json"))
        for line in commit.read_text().splitlines()
        if line.startswith('{"add"')
    ]
    [added] = adds  # one data file: the positions are its rows
    bitmap = _deleted_rows_bitmap(positions)
    name = uuid.uuid4()
    (path / f"deletion_vector_{name}.bin").write_bytes(
        b"\x01" + struct.pack(">I", len(bitmap)) + bitmap + struct.pack(">I", zlib.crc32(bitmap))
    )
    descriptor = {
        "storageType": "u",  # a file beside the data, named by the UUID in Z85
        "pathOrInlineDv": _z85(name.bytes),
        "offset": 1,
        "sizeInBytes": len(bitmap),
        "cardinality": len(positions),
    }
    now = int(time.time() * 1000)
    actions = [
        {"commitInfo": {"timestamp": now, "operation": "DELETE", "engineInfo": "tests"}},
        {
            "protocol": {
                "minReaderVersion": 3,
                "minWriterVersion": 7,
                "readerFeatures": ["deletionVectors"],
                "writerFeatures": ["deletionVectors"],
            }
        },
        {
            "metaData": {
                **metadata,
                "configuration": {
                    **metadata["configuration"],
                    "delta.enableDeletionVectors": "true",
                },
            }
        },
        {
            "remove": {
                "path": added["path"],
                "deletionTimestamp": now,
                "dataChange": True,
                "extendedFileMetadata": True,
                "partitionValues": added["partitionValues"],
                "size": added["size"],
            }
        },
        {"add": {**added, "modificationTime": now, "deletionVector": descriptor}},
    ]
    version = len(list(log.glob("*.json")))
    (log / f"{version:020d}.json").write_text("".join(json.dumps(a) + "\n" for a in actions))
