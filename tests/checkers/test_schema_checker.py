"""Schema-change checks: a Delta table's columns against its previous version, read from the log
alone. A dropped, an added and a retyped column are one failing element each, no Spark job runs,
a column that became nullable is one too (from the log: Spark's reader calls every column
nullable), and KnownBroken excuses a column by name. Without a baseline, the schema recorded
at the check's previous run (in the project database) is the baseline: the first run passes and
records."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest
import sqlalchemy as sa

from checkers import KnownBroken, RecordedSchema, SchemaChecker, Status
from checkers.parsers import DeltaParser
from checks import QualityCheck
from scheduling.tick.evaluate import evaluate_checks
from tests.checkers.lake_tables import DAYS, day_rows, write_delta
from tests.metrics.jobs import count_jobs


def change_schema(path) -> None:  # type: ignore[no-untyped-def]
    """A new version of the table: note dropped, qty retyped to string, channel added."""
    from deltalake import write_deltalake

    rows = day_rows(DAYS[1])
    changed = rows.drop_columns(["note"]).set_column(1, "qty", rows["qty"].cast(pa.string()))
    changed = changed.append_column("channel", pa.array(["web"] * len(rows)))
    write_deltalake(str(path), changed, mode="overwrite", schema_mode="overwrite")


@pytest.fixture(scope="module")
def versions(tmp_path_factory) -> tuple[DeltaParser, DeltaParser]:
    path = tmp_path_factory.mktemp("schema") / "orders"
    write_delta(path, DAYS[:1])
    change_schema(path)
    return DeltaParser(str(path), version=0), DeltaParser(str(path))


def assert_the_three_changes(result) -> None:  # type: ignore[no-untyped-def]
    """One failing element each for the dropped, the added and the retyped column."""
    assert (result.failing, result.unexcused, result.total) == (3, 3, 7)
    assert sorted((r["column"], r["change"]) for r in result.sample()) == [
        ("channel", "added"),
        ("note", "removed"),
        ("qty", "type"),
    ]


@pytest.mark.classic_only  # jobs are counted through the classic status tracker
def test_a_dropped_added_and_retyped_column_fail_one_element_each_with_no_spark_job(
    spark, versions
):
    before, now = versions
    checker = SchemaChecker(now.load(spark), baseline=before.load(spark).schema)
    result, jobs = count_jobs(spark, checker.run)
    assert jobs == 0
    assert_the_three_changes(result)
    assert next(r for r in result.sample() if r["column"] == "qty")["now"] == "string"


@pytest.mark.classic_only  # jobs are counted through the classic status tracker
def test_a_column_that_became_nullable_fails_one_element_from_the_tables_metadata(spark, tmp_path):
    from deltalake import write_deltalake

    path = str(tmp_path / "orders")
    strict = pa.schema([pa.field("id", pa.int64(), nullable=False), ("note", pa.string())])
    write_deltalake(path, pa.table({"id": [1, 2], "note": ["a", None]}, schema=strict))
    loose = pa.table({"id": pa.array([3, None], pa.int64()), "note": ["b", "c"]})
    write_deltalake(path, loose, mode="overwrite", schema_mode="overwrite")
    # Spark's file reader calls every column nullable: only the table's metadata tells
    assert DeltaParser(path, version=0).load(spark).schema["id"].nullable
    checker = SchemaChecker(DeltaParser(path).load(spark), baseline=DeltaParser(path, version=0))
    result, jobs = count_jobs(spark, checker.run)
    assert jobs == 0
    assert (result.failing, result.total) == (1, 2)
    assert result.sample() == [
        {"column": "id", "change": "nullability", "was": "not null", "now": "nullable"}
    ]
    unchecked = SchemaChecker(checker.dataset, baseline=checker.baseline, nullability=False)
    assert unchecked.run().failing == 0


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


@pytest.mark.classic_only  # jobs are counted through the classic status tracker
def test_without_a_baseline_the_previous_runs_schema_is_compared_with_no_spark_job(
    spark, versions, tmp_path
):
    before, now = versions
    recorded = RecordedSchema("orders", url=f"sqlite:///{tmp_path / 'dq.db'}")
    first = SchemaChecker(before.load(spark), recorded=recorded).run()
    assert (first.failing, first.total) == (0, 6)  # nothing to compare with: passes, records
    assert SchemaChecker(before.load(spark), recorded=recorded).run().failing == 0
    changed, jobs = count_jobs(spark, SchemaChecker(now.load(spark), recorded=recorded).run)
    assert jobs == 0
    assert_the_three_changes(changed)
    # the run that saw the change recorded the new schema: the change is told once
    assert SchemaChecker(now.load(spark), recorded=recorded).run().failing == 0


def test_a_check_without_a_baseline_compares_with_its_previous_run_in_the_database(
    spark, tmp_path, monkeypatch
):
    url = f"sqlite:///{tmp_path / 'dq.db'}"
    monkeypatch.setenv("DQ_DATABASE_URL", url)
    path = tmp_path / "orders"
    write_delta(path, DAYS[:1])

    class OrderColumns(QualityCheck, register=False):
        name = "order_columns"
        parser = DeltaParser(str(path))

        def checker(self, orders):
            return SchemaChecker(orders)

    now = dt.datetime(2024, 3, 2, 6, tzinfo=dt.UTC)
    [first] = evaluate_checks([OrderColumns], spark=spark, now=now)
    assert (first.status, first.failing, first.total) == (Status.PASSED, 0, 6)
    change_schema(path)
    [second] = evaluate_checks([OrderColumns], spark=spark, now=now + dt.timedelta(days=1))
    assert (second.status, second.failing) == (Status.FAILED, 3)
    assert second.failing_keys == ("channel", "note", "qty")
    with sa.create_engine(url).connect() as connection:  # kept under the check's name
        series = connection.exec_driver_sql("SELECT series FROM dq_schemas").scalars().all()
    assert series == ["order_columns"]


def test_without_a_baseline_or_a_check_to_name_it_is_a_configuration_error(spark, versions):
    _, now = versions
    result = SchemaChecker(now.load(spark)).run()
    assert result.error is not None and "recorded=RecordedSchema" in result.error
