"""Partitioned files: listing name=value directories (keys, fingerprints, period starts, files)
without reading data, and reading only some partitions, on real files written in tmp dirs."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import urllib.parse
from pathlib import Path

import pytest

from checkers.parsers import (
    PARTITION_COLUMN,
    CallableParser,
    CsvParser,
    HivePartitions,
    JsonParser,
    ParquetParser,
    PartitionColumn,
    SourceError,
    SqlQueryParser,
    TableParser,
    _hive,
)
from checkers.parsers.partitions import period_start

UTC = dt.UTC


def day_csv(root: Path, rows: dict[str, list[str]], header: str = "id,amount") -> None:
    """CSV files under root/<partition dir>/part-0.csv."""
    for directory, lines in rows.items():
        (root / directory).mkdir(parents=True, exist_ok=True)
        (root / directory / "part-0.csv").write_text("\n".join([header, *lines]) + "\n")


def local(uri: str) -> str:
    """A path Spark reports (`inputFiles`, URI-encoded) as a local path."""
    return urllib.parse.unquote(urllib.parse.urlparse(uri).path)


def read_files(df) -> set[str]:
    return {local(u) for u in df.inputFiles()}


@pytest.fixture
def days(tmp_path) -> Path:
    root = tmp_path / "bookings"
    day_csv(root, {"day=2013-01-05": ["1,2.5", "2,3.0"], "day=2013-01-06": ["3,1.0"]})
    return root


def csv(root: Path, **kwargs) -> CsvParser:
    return CsvParser(str(root), partitioning=HivePartitions(), **kwargs)


def fingerprints(parser, spark) -> dict[str, str]:
    return {p.key: p.fingerprint for p in parser.partitions(spark)}


class NoSpark:
    """Stands in for the session where listing must not use Spark at all."""

    def __getattr__(self, name: str) -> object:
        raise AssertionError(f"listing local files used spark.{name}")


def test_listing_gives_keys_period_starts_and_data_files(days):
    found = csv(days).partitions(NoSpark())  # type: ignore[arg-type]
    assert [p.key for p in found] == ["day=2013-01-05", "day=2013-01-06"]
    assert [p.ts for p in found] == [
        dt.datetime(2013, 1, 5, tzinfo=UTC),
        dt.datetime(2013, 1, 6, tzinfo=UTC),
    ]
    assert [p.paths for p in found] == [
        (str(days / "day=2013-01-05" / "part-0.csv"),),
        (str(days / "day=2013-01-06" / "part-0.csv"),),
    ]
    assert all(len(p.fingerprint) == 64 and int(p.fingerprint, 16) >= 0 for p in found)
    assert found[0].fingerprint != found[1].fingerprint
    assert all(p.value is None for p in found)


def test_spark_written_parquet_lists_without_spark(spark, tmp_path):
    root = tmp_path / "flights"
    rows = [(1, "2013-01-05"), (2, "2013-01-05"), (3, "2013-01-06")]
    spark.createDataFrame(rows, "id int, day string").write.partitionBy("day").parquet(str(root))
    assert (root / "_SUCCESS").exists() and any(root.rglob(".*.crc"))
    parser = ParquetParser(str(root), partitioning=HivePartitions(("day",)))
    found = parser.partitions(NoSpark())  # type: ignore[arg-type]
    on_disk = sorted(str(p) for p in root.rglob("part-*.parquet"))
    assert [p.key for p in found] == ["day=2013-01-05", "day=2013-01-06"]
    assert sorted(path for p in found for path in p.paths) == on_disk


def test_fingerprints_follow_the_files(days):
    parser = csv(days)
    before = fingerprints(parser, None)
    assert fingerprints(parser, None) == before  # nothing changed

    part = days / "day=2013-01-05" / "part-0.csv"
    stat = part.stat()
    os.utime(part, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))  # rewritten, same size
    touched = fingerprints(parser, None)
    assert touched["day=2013-01-05"] != before["day=2013-01-05"]
    assert touched["day=2013-01-06"] == before["day=2013-01-06"]

    (days / "day=2013-01-06" / "part-1.csv").write_text("id,amount\n4,2.0\n")
    added = fingerprints(parser, None)
    assert added["day=2013-01-06"] != touched["day=2013-01-06"]
    assert added["day=2013-01-05"] == touched["day=2013-01-05"]

    shutil.rmtree(days / "day=2013-01-05")
    assert list(fingerprints(parser, None)) == ["day=2013-01-06"]


def test_size_alone_changes_the_fingerprint(days):
    parser = csv(days)
    part = days / "day=2013-01-06" / "part-0.csv"
    mtime = part.stat().st_mtime_ns
    before = fingerprints(parser, None)
    part.write_text("id,amount\n3,10.0\n")
    os.utime(part, ns=(mtime, mtime))
    assert fingerprints(parser, None)["day=2013-01-06"] != before["day=2013-01-06"]


def test_hidden_files_and_directories_are_ignored(days):
    parser = csv(days)
    before = parser.partitions(None)  # type: ignore[arg-type]
    (days / "_SUCCESS").write_text("")
    (days / "day=2013-01-05" / ".part-0.csv.crc").write_text("crc")
    (days / "day=2013-01-05" / "_committed_123").write_text("{}")
    (days / "day=2013-01-05" / "part-9.csv._COPYING_").write_text("id,amount\n")
    (days / "_temporary" / "0").mkdir(parents=True)
    (days / "_temporary" / "0" / "part-0.csv").write_text("id,amount\n9,9\n")
    (days / ".staging").mkdir()
    (days / ".staging" / "part-0.csv").write_text("id,amount\n9,9\n")
    (days / "day=2013-01-07").mkdir()  # no data files yet: not a partition
    (days / "day=2013-01-07" / "_SUCCESS").write_text("")
    assert parser.partitions(None) == before  # type: ignore[arg-type]


def test_nested_levels_name_the_period(tmp_path):
    root = tmp_path / "hourly"
    day_csv(root, {"year=2013/month=01/day=05": ["1,1"], "year=2013/month=02/day=11": ["2,2"]})
    found = csv(root).partitions(None)  # type: ignore[arg-type]
    assert [p.key for p in found] == ["year=2013/month=01/day=05", "year=2013/month=02/day=11"]
    assert [p.ts for p in found] == [
        dt.datetime(2013, 1, 5, tzinfo=UTC),
        dt.datetime(2013, 2, 11, tzinfo=UTC),
    ]
    declared = CsvParser(str(root), partitioning=HivePartitions(("year", "month", "day")))
    assert declared.partitions(None) == found  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("segments", "expected"),
    [
        ([("day", "2013-01-05")], dt.datetime(2013, 1, 5, tzinfo=UTC)),
        ([("dt", "2013-01-05"), ("hour", "07")], dt.datetime(2013, 1, 5, 7, tzinfo=UTC)),
        ([("date", "2013-01-05"), ("country", "FR")], dt.datetime(2013, 1, 5, tzinfo=UTC)),
        ([("year", "2013"), ("month", "01")], dt.datetime(2013, 1, 1, tzinfo=UTC)),
        (
            [("year", "2013"), ("month", "1"), ("day", "5"), ("hour", "23")],
            dt.datetime(2013, 1, 5, 23, tzinfo=UTC),
        ),
        ([("ts", "2013-01-01 05:00")], dt.datetime(2013, 1, 1, 5, tzinfo=UTC)),
        ([("ts", "2013-01-01T05:00:00+02:00")], dt.datetime(2013, 1, 1, 3, tzinfo=UTC)),
        ([("year", "2013"), ("day", "05")], None),  # no month: no period
        ([("day", "2013-02-30")], None),
        ([("from", "2013-01-01"), ("to", "2013-02-01")], None),  # two dates: which one?
        ([("country", "FR")], None),
        ([("id", "20130105")], None),
    ],
)
def test_period_start(segments, expected):
    assert period_start(segments) == expected


def test_declared_levels_that_differ_from_the_layout_are_a_source_error(days):
    parser = CsvParser(str(days), partitioning=HivePartitions(("year", "month")))
    with pytest.raises(
        SourceError, match=r"CSV .*bookings.*partitioned by day, declared year/month"
    ):
        parser.partitions(None)  # type: ignore[arg-type]


def test_mixed_layouts_and_stray_files_are_source_errors(days, tmp_path):
    day_csv(days, {"year=2013/month=01": ["9,9"]})
    with pytest.raises(SourceError, match="mixes partition layouts"):
        csv(days).partitions(None)  # type: ignore[arg-type]

    stray = tmp_path / "stray"
    day_csv(stray, {"day=2013-01-05": ["1,1"], "misc": ["2,2"]})
    with pytest.raises(SourceError, match=r"misc/part-0\.csv .* not in a name=value directory"):
        csv(stray).partitions(None)  # type: ignore[arg-type]

    at_root = tmp_path / "flat"
    day_csv(at_root, {".": ["1,1"]})
    with pytest.raises(SourceError, match="not in a name=value directory"):
        csv(at_root).partitions(None)  # type: ignore[arg-type]


def test_missing_root_is_a_source_error(tmp_path):
    with pytest.raises(SourceError, match=r"cannot list the partitions of CSV .*nowhere"):
        csv(tmp_path / "nowhere").partitions(None)  # type: ignore[arg-type]


def test_an_empty_root_has_no_partitions(tmp_path):
    assert csv(tmp_path).partitions(None) == []  # type: ignore[arg-type]


@pytest.mark.connect
def test_read_partitions_reads_only_their_files(spark, tmp_path):
    root = tmp_path / "flights"
    rows = [(n, f"2013-01-0{n % 3 + 1}", n * 1.5) for n in range(12)]
    df = spark.createDataFrame(rows, "id int, day string, delay double")
    df.write.partitionBy("day").parquet(str(root))
    parser = ParquetParser(str(root), schema="id int, delay double", partitioning=HivePartitions())
    found = parser.partitions(spark)
    chosen = [found[0], found[2]]
    read = parser.read_partitions(spark, chosen)
    assert read_files(read) == {path for p in chosen for path in p.paths}
    got = sorted((r["id"], str(r["day"]), r[PARTITION_COLUMN]) for r in read.collect())
    assert got == sorted(
        (n, day, f"day={day}") for n, day, _ in rows if day in {"2013-01-01", "2013-01-03"}
    )
    assert read.columns == [*parser.load(spark).columns, PARTITION_COLUMN]
    assert dict(read.dtypes)[PARTITION_COLUMN] == "string"


@pytest.mark.connect
def test_partition_keys_of_rows_match_the_listing_for_escaped_values(spark, tmp_path):
    root = tmp_path / "events"
    values = ["2013-01-01 05:00", "a+b c", "x%y/z", "plain"]
    spark.createDataFrame(
        [(n, v) for n, v in enumerate(values)], "id int, ts string"
    ).write.partitionBy("ts").parquet(str(root))
    parser = ParquetParser(str(root), partitioning=HivePartitions(("ts",)))
    found = parser.partitions(spark)
    assert [p.key for p in found] == [
        "ts=2013-01-01 05%3A00",
        "ts=a+b c",
        "ts=plain",
        "ts=x%25y%2Fz",
    ]
    assert found[0].ts == dt.datetime(2013, 1, 1, 5, tzinfo=UTC)
    assert [p.ts for p in found[1:]] == [None, None, None]
    read = parser.read_partitions(spark, found)
    by_key = {r[PARTITION_COLUMN]: r["ts"] for r in read.collect()}
    assert by_key == {
        "ts=2013-01-01 05%3A00": "2013-01-01 05:00",
        "ts=a+b c": "a+b c",
        "ts=plain": "plain",
        "ts=x%25y%2Fz": "x%y/z",
    }
    for partition in found:
        one = parser.read_partitions(spark, [partition])
        assert read_files(one) == set(partition.paths)
        assert [r[PARTITION_COLUMN] for r in one.collect()] == [partition.key]


def test_nested_keys_of_rows_match_the_listing(spark, tmp_path):
    root = tmp_path / "hourly"
    day_csv(
        root,
        {"year=2013/month=01/day=05": ["1,1.0", "2,2.0"], "year=2013/month=01/day=06": ["3,3.0"]},
    )
    parser = csv(root, schema="id int, amount double")
    found = parser.partitions(spark)
    read = parser.read_partitions(spark, found[1:])
    assert [
        (r["id"], r["year"], r["month"], r["day"], r[PARTITION_COLUMN]) for r in read.collect()
    ] == [(3, 2013, 1, 6, "year=2013/month=01/day=06")]
    assert read_files(read) == set(found[1].paths)


def test_json_partitions_keep_the_full_read_columns(spark, tmp_path):
    root = tmp_path / "api"
    for day, body in {
        "day=2013-01-05": '{"id": 1}\n{"id": 2}\n',
        "day=2013-01-06": '{"id": 3}\n',
    }.items():
        (root / day).mkdir(parents=True)
        (root / day / "part-0.json").write_text(body)
    parser = JsonParser(str(root), schema="id long", partitioning=HivePartitions())
    found = parser.partitions(spark)
    read = parser.read_partitions(spark, found[:1])
    assert sorted((r["id"], r["day"], r[PARTITION_COLUMN]) for r in read.collect()) == [
        (1, dt.date(2013, 1, 5), "day=2013-01-05"),
        (2, dt.date(2013, 1, 5), "day=2013-01-05"),
    ]
    full = parser.load(spark)
    assert [(f.name, f.dataType) for f in read.schema.fields][:-1] == [
        (f.name, f.dataType) for f in full.schema.fields
    ]


def test_broken_schema_promise_is_a_source_error(spark, tmp_path):
    root = tmp_path / "parquet"
    spark.createDataFrame([(1, "a")], "id int, day string").write.partitionBy("day").parquet(
        str(root)
    )
    parquet = ParquetParser(str(root), schema="id string", partitioning=HivePartitions())
    with pytest.raises(
        SourceError, match=r"does not match its promised schema: column 'id' is int"
    ):
        parquet.read_partitions(spark, parquet.partitions(spark))


def test_csv_header_is_checked_when_read_as_in_a_full_read(spark, days):
    parser = csv(days, schema="id int, price double")
    read = parser.read_partitions(spark, parser.partitions(spark))  # lazy, like load
    with pytest.raises(Exception, match="CSV header does not conform to the schema"):
        read.collect()


def test_no_partitions_read_as_an_empty_frame_with_the_columns(spark, days):
    parser = csv(days, schema="id int, amount double")
    empty = parser.read_partitions(spark, [])
    assert empty.collect() == []
    full = parser.read_partitions(spark, parser.partitions(spark))
    assert empty.schema == full.schema


def test_glob_characters_in_file_names_are_read_literally(spark, days):
    odd = days / "day=2013-01-06" / "part[1]{a,b}.csv"
    odd.write_text("id,amount\n7,7.0\n")
    parser = csv(days, schema="id int, amount double")
    day = parser.partitions(spark)[1]
    assert str(odd) in day.paths
    read = parser.read_partitions(spark, [day])
    assert sorted(r["id"] for r in read.collect()) == [3, 7]
    assert read_files(read) == set(day.paths)


def test_file_uri_root_is_listed_locally_and_read(spark, days):
    uri = CsvParser(f"file://{days}", schema="id int, amount double", partitioning=HivePartitions())
    plain = csv(days, schema="id int, amount double")
    assert uri.partitions(NoSpark()) == plain.partitions(NoSpark())  # type: ignore[arg-type]
    read = uri.read_partitions(spark, uri.partitions(spark)[:1])
    assert sorted((r["id"], r[PARTITION_COLUMN]) for r in read.collect()) == [
        (1, "day=2013-01-05"),
        (2, "day=2013-01-05"),
    ]


@pytest.mark.connect
def test_other_file_systems_are_listed_by_spark_file_index(spark, tmp_path):
    # The branch for s3a://, hdfs://... driven on local files: the same partitions, and the
    # paths Spark gives read back the same rows.
    root = tmp_path / "events"
    spark.createDataFrame(
        [(1, "a b:c"), (2, "d+e"), (3, "d+e")], "id int, s string"
    ).write.partitionBy("s").parquet(str(root))
    (root / "s=d+e" / "_SUCCESS").write_text("")
    by_spark = _hive._grouped(_hive._spark_listing(spark, f"file://{root}"), (), str(root))
    by_os = ParquetParser(str(root), partitioning=HivePartitions()).partitions(spark)
    assert sorted(p.key for p in by_spark) == [p.key for p in by_os] == ["s=a b%3Ac", "s=d+e"]
    assert sorted(_hive.local_root(path) for p in by_spark for path in p.paths) == sorted(
        path for p in by_os for path in p.paths
    )
    parser = ParquetParser(str(root), partitioning=HivePartitions())
    read = parser.read_partitions(spark, sorted(by_spark, key=lambda p: p.key)[1:])
    assert sorted((r["id"], r[PARTITION_COLUMN]) for r in read.collect()) == [
        (2, "s=d+e"),
        (3, "s=d+e"),
    ]


def test_partitioning_of_the_wrong_kind_is_refused():
    with pytest.raises(
        ValueError, match=r"CsvParser takes partitioning=HivePartitions.*not PartitionColumn"
    ):
        CsvParser("x", partitioning=PartitionColumn("day", changed="updated_at"))
    with pytest.raises(ValueError, match=r"ParquetParser takes partitioning=HivePartitions"):
        ParquetParser("x", partitioning=PartitionColumn("day", changed="updated_at"))
    with pytest.raises(
        ValueError, match=r"TableParser takes partitioning=PartitionColumn.*fits file"
    ):
        TableParser("t", partitioning=HivePartitions())
    with pytest.raises(ValueError, match=r"SqlQueryParser takes partitioning=PartitionColumn"):
        SqlQueryParser("sqlite://", "SELECT 1", partitioning=HivePartitions())
    with pytest.raises(ValueError, match=r"needs changed=: a column whose maximum grows"):
        PartitionColumn("day")
    with pytest.raises(ValueError, match=r"needs changed="):
        PartitionColumn("day", changed="")


def test_parsers_without_partitioning_have_no_partitions(spark, days):
    for parser in [CsvParser(str(days)), TableParser("t"), CallableParser(lambda s: s.range(1))]:
        with pytest.raises(ValueError, match="declares no partitioning"):
            parser.partitions(spark)
        with pytest.raises(ValueError, match="declares no partitioning"):
            parser.read_partitions(spark, [])


def test_partitioned_parsers_stay_hashable_values():
    one = ParquetParser("x", partitioning=HivePartitions(["day"]))  # type: ignore[arg-type]
    two = ParquetParser("x", partitioning=HivePartitions(("day",)))
    assert one == two and hash(one) == hash(two)
    assert one != ParquetParser("x")
    table = TableParser("t", partitioning=PartitionColumn("day", changed="updated_at"))
    assert hash(table) == hash(TableParser("t", partitioning=PartitionColumn("day", "updated_at")))
