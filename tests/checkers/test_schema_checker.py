"""Schema-change checks: a Delta table's columns against its previous version, read from the log
alone. A dropped, an added and a retyped column are one failing element each, no Spark job runs,
and KnownBroken excuses a column by name."""

from __future__ import annotations

import pyarrow as pa
import pytest

from checkers import KnownBroken, SchemaChecker
from checkers.parsers import DeltaParser
from tests.checkers.lake_tables import DAYS, day_rows, write_delta
from tests.metrics.jobs import count_jobs


@pytest.fixture(scope="module")
def versions(tmp_path_factory) -> tuple[DeltaParser, DeltaParser]:
    from deltalake import write_deltalake

    path = tmp_path_factory.mktemp("schema") / "orders"
    write_delta(path, DAYS[:1])
    rows = day_rows(DAYS[1])
    changed = rows.drop_columns(["note"]).set_column(  # note dropped, qty retyped to string
        1, "qty", rows["qty"].cast(pa.string())
    )
    changed = changed.append_column("channel", pa.array(["web"] * len(rows)))  # added
    write_deltalake(str(path), changed, mode="overwrite", schema_mode="overwrite")
    return DeltaParser(str(path), version=0), DeltaParser(str(path))


@pytest.mark.classic_only  # jobs are counted through the classic status tracker
def test_a_dropped_added_and_retyped_column_fail_one_element_each_with_no_spark_job(
    spark, versions
):
    before, now = versions
    checker = SchemaChecker(now.load(spark), baseline=before.load(spark).schema)
    result, jobs = count_jobs(spark, checker.run)
    assert jobs == 0
    assert (result.failing, result.unexcused, result.total) == (3, 3, 7)
    assert sorted((r["column"], r["change"]) for r in result.sample()) == [
        ("channel", "added"),
        ("note", "removed"),
        ("qty", "type"),
    ]
    assert next(r for r in result.sample() if r["column"] == "qty")["now"] == "string"


def test_known_broken_excuses_a_changed_column_by_name(spark, versions):
    before, now = versions
    checker = SchemaChecker(now.load(spark), baseline=before.load(spark).schema)
    result = checker.run(KnownBroken(["note"]))
    assert (result.failing, result.unexcused) == (3, 2)
    assert result.failing_keys() == ["channel", "qty"]


def test_a_promised_schema_is_a_baseline(spark, versions):
    _, now = versions
    promised = "id bigint, qty string, price decimal(9,2), ratio double, day string"
    result = SchemaChecker(now.load(spark), baseline=promised, nullability=False).run()
    assert [(r["column"], r["change"]) for r in result.sample()] == [("channel", "added")]
