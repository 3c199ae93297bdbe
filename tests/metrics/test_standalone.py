"""ColumnCount (from the schema, no Spark job) and CustomSql (a statement of its own, one job):
values, errors beside working analyzers, their states and merges, stored states and views."""

from __future__ import annotations

import pytest

from checkers.metrics import (
    Check,
    CheckLevel,
    ColumnCount,
    ColumnNamesState,
    ConstraintStatus,
    CustomSql,
    CustomSqlState,
    FileStateStore,
    Size,
    VerificationSuite,
    ZerosCount,
    metrics_for_view,
    run_analysis,
)
from checkers.metrics.partitioned import analyze_partitions
from tests.metrics.jobs import count_jobs

SCHEMA = "id int, amount double, day string"
ROWS = [(1, 10.0, "d1"), (2, -5.0, "d1"), (3, None, "d2"), (4, 0.0, "d2")]


@pytest.fixture(scope="module")
def data(spark):
    return spark.createDataFrame(ROWS, SCHEMA)


@pytest.fixture(scope="module")
def empty(spark):
    return spark.createDataFrame([], SCHEMA)


@pytest.mark.connect
# -- ColumnCount -----------------------------------------------------------------------------
def test_column_count_reads_the_schema(data, empty) -> None:
    result = run_analysis(data, [ColumnCount()])
    metric = result.metric(ColumnCount())
    assert metric.value == 3.0 and result.spark_actions == 0
    assert (metric.name, metric.entity.value, metric.instance) == ("ColumnCount", "Dataset", "*")
    assert run_analysis(empty, [ColumnCount()]).metric(ColumnCount()).value == 3.0


@pytest.mark.classic_only
def test_column_count_costs_no_job_alone_or_beside_a_scan(spark, data) -> None:
    _, none = count_jobs(spark, lambda: run_analysis(data, [ColumnCount()]))
    _, alone = count_jobs(spark, lambda: run_analysis(data, [Size()]))
    both, jobs = count_jobs(spark, lambda: run_analysis(data, [Size(), ColumnCount()]))
    assert none == 0 and jobs == alone == both.spark_actions == 1


def test_column_names_merge_to_the_union_by_name() -> None:
    ab, abc = ColumnNamesState(("b", "a")), ColumnNamesState(("a", "b", "c"))
    assert ab.merge(ab) == ab  # partitions of one schema: the same count, not the sum
    assert ab.merge(abc) == abc.merge(ab) == abc  # a grown schema counts its new column
    assert ab.merge(ColumnNamesState.zero()) == ab
    doubled = ColumnNamesState(("a", "a"))  # a schema with a repeated name keeps both
    assert ColumnCount().compute_value(doubled.merge(ab)) == 3.0
    assert ColumnCount().compute_value(ColumnNamesState.zero()) == 0.0


def test_column_count_per_partition_and_from_stored_states(spark, data, tmp_path) -> None:
    found = analyze_partitions(data, [ColumnCount()], ["d1", "d2"], column="day")
    assert found.states["d1"][ColumnCount()] == ColumnNamesState(("amount", "day", "id"))
    store = FileStateStore(tmp_path)
    run_analysis(data, [ColumnCount()], state_store=store, dataset="t", partition="p1")
    wider = data.withColumn("extra", data.id)
    run_analysis(wider, [ColumnCount()], state_store=store, dataset="t", partition="p2")
    view = metrics_for_view(store, [ColumnCount()], dataset="t")
    assert view.metric(ColumnCount()).value == 4.0


def test_has_column_count_and_it_cannot_be_filtered(data) -> None:
    check = Check(CheckLevel.ERROR, "columns").has_column_count(lambda n: n == 3)
    result = VerificationSuite(data).add_check(check).run()
    assert result.check_results[0].constraint_results[0].status is ConstraintStatus.SUCCESS
    with pytest.raises(ValueError, match="cannot be filtered"):
        check.where("id > 1")


@pytest.mark.connect
# -- CustomSql -------------------------------------------------------------------------------
def test_custom_sql_reads_the_run_data_as_view_primary(data) -> None:
    negative = CustomSql("SELECT count(*) FROM primary WHERE amount < 0")
    total = CustomSql("SELECT sum(amount) FROM t", view="t", disambiguator="total")
    result = run_analysis(data, [negative, total])
    assert result.metric(negative).value == 1.0
    assert result.metric(total).value == 5.0  # the NULL is skipped by sum
    metric = result.metric(total)
    assert (metric.name, metric.entity.value, metric.instance) == ("CustomSQL", "Dataset", "total")


def test_custom_sql_without_a_view_runs_the_statement_as_written(spark, data) -> None:
    data.where("id > 2").createOrReplaceTempView("late_rows")
    rows = CustomSql("SELECT count(*) FROM late_rows", view=None)
    assert run_analysis(data, [rows]).metric(rows).value == 2.0


def test_custom_sql_on_empty_input(empty) -> None:
    count = CustomSql("SELECT count(*) FROM primary")
    total = CustomSql("SELECT sum(amount) FROM primary")
    result = run_analysis(empty, [count, total])
    assert result.metric(count).value == 0.0
    assert "returned NULL" in result.metric(total).error  # Deequ reads a NULL as 0.0


@pytest.mark.connect
@pytest.mark.parametrize(
    ("statement", "message"),
    [
        ("SELECT count(*) FROM primary WHERE nope > 0", "nope"),  # a missing column
        ("SELEC 1", "PARSE_SYNTAX_ERROR"),
        ("SELECT id, amount FROM primary", "returned 2 columns"),
        ("SELECT id FROM primary", "returned more than one row"),
        ("SELECT id FROM primary WHERE id > 100", "returned no rows"),
        ("SELECT map(1, 2) FROM primary LIMIT 1", "CAST"),  # a wrong type: not a number
    ],
)
def test_bad_statements_are_error_metrics_beside_working_analyzers(data, statement, message):
    bad = CustomSql(statement)
    result = run_analysis(data, [bad, Size(), ZerosCount("amount")])
    assert not result.metric(bad).ok and message in result.metric(bad).error
    assert result.metric(Size()).value == 4.0
    assert result.metric(ZerosCount("amount")).value == 1.0


@pytest.mark.classic_only
def test_custom_sql_costs_one_job_of_its_own(spark, data) -> None:
    _, alone = count_jobs(spark, lambda: run_analysis(data, [Size()]))
    statement = CustomSql("SELECT max(amount) FROM primary")
    both, jobs = count_jobs(spark, lambda: run_analysis(data, [Size(), statement]))
    assert jobs == alone + 1 and both.spark_actions == 2
    assert both.metric(statement).value == 10.0


def test_custom_sql_states_of_separate_data_do_not_combine(data, tmp_path) -> None:
    one, zero = CustomSqlState(3.0, 1), CustomSqlState.zero()
    assert one.merge(zero) == zero.merge(one) == one
    merged = one.merge(CustomSqlState(4.0, 1))
    assert merged == CustomSqlState(None, 2)
    statement = CustomSql("SELECT avg(amount) FROM primary")
    assert "cannot be combined" in statement.metric_from_state(merged).error
    assert "Empty state" in statement.metric_from_state(zero).error
    # through the engine: a previous state, stored partitions, partitioned analysis
    first = run_analysis(data, [statement])
    again = run_analysis(data, [statement], aggregate_with=first.states)
    assert "cannot be combined" in again.metric(statement).error
    store = FileStateStore(tmp_path)
    run_analysis(data, [statement], state_store=store, dataset="t", partition="p1")
    run_analysis(data, [statement], state_store=store, dataset="t", partition="p2")
    single = metrics_for_view(store, [statement], dataset="t", partitions=["p1"])
    assert single.metric(statement).value == pytest.approx(5.0 / 3)
    both = metrics_for_view(store, [statement], dataset="t")
    assert "cannot be combined" in both.metric(statement).error
    partitioned = analyze_partitions(data, [statement], ["d1"], column="day")
    assert "no per-partition state" in partitioned.errors[statement]


def test_custom_sql_constraint(data) -> None:
    holds = Check(CheckLevel.ERROR, "holds").custom_sql(
        "SELECT count(*) FROM primary WHERE amount IS NULL", lambda n: n == 1
    )
    broken = Check(CheckLevel.ERROR, "broken").custom_sql("SELECT nope FROM primary", bool)
    result = VerificationSuite(data).add_checks([holds, broken]).run()
    first, second = (r.constraint_results[0] for r in result.check_results)
    assert first.status is ConstraintStatus.SUCCESS and first.value == 1.0
    assert second.status is ConstraintStatus.FAILURE and "nope" in second.message
    with pytest.raises(ValueError, match="cannot be filtered"):
        holds.where("id > 1")
    with pytest.raises(ValueError, match="needs a SQL statement"):
        CustomSql("  ")
