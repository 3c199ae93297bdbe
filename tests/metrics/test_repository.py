"""The metrics repository on SQLite and PostgreSQL: exact round trips of every metric type,
queries by source, time, tags and metric, retention, and an index behind source + time."""

from __future__ import annotations

import datetime as dt
import uuid

import pytest
import sqlalchemy as sa

from checkers.metrics import (
    ApproxQuantiles,
    Check,
    CheckLevel,
    Completeness,
    DataType,
    Histogram,
    Mean,
    MetricsRepository,
    ResultKey,
    Size,
    VerificationSuite,
    run_analysis,
)
from tests.conftest import POSTGRES_URL

T0 = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)
ANALYZERS = [
    Size(),
    Completeness("s"),
    Mean("x"),
    Histogram("s"),
    DataType("s"),
    ApproxQuantiles("x", (0.25, 0.5, 0.75)),
]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def repository(request, tmp_path):
    url = f"sqlite:///{tmp_path / 'metrics.db'}" if request.param == "sqlite" else POSTGRES_URL
    return MetricsRepository(url)


@pytest.fixture
def source() -> str:
    return f"orders_{uuid.uuid4().hex[:8]}"  # the PostgreSQL database outlives a test


@pytest.fixture(scope="module")
def analysis(spark):
    df = spark.createDataFrame(
        [(1.0, "a"), (2.5, "b"), (None, "12"), (0.1 + 0.2, None), (7.25, "a")], "x double, s string"
    )
    return run_analysis(df, ANALYZERS)


def test_every_metric_type_round_trips_exactly(repository, source, analysis):
    saved = repository.save(
        ResultKey(T0, {"env": "prod"}),
        analysis.metrics.values(),
        source_table=source,
        pipeline_run_id="run-1",
        partition_id="p=1",
    )
    assert saved == len(ANALYZERS)
    records = {r.name: r for r in repository.query(source_table=source)}
    for analyzer in ANALYZERS:
        metric = analysis.metric(analyzer)
        assert records[metric.name].value == metric.value, metric.name
    mean = records["Mean"]
    assert (mean.entity, mean.instance, mean.tags, mean.pipeline_run_id) == (
        "Column",
        "x",
        {"env": "prod"},
        "run-1",
    )
    assert mean.dataset_time == T0


def test_queries_by_time_tags_and_metric(repository, source, analysis):
    for day in range(5):
        repository.save(
            ResultKey(T0 + dt.timedelta(days=day), {"env": "prod" if day % 2 else "dev"}),
            [analysis.metric(Size()), analysis.metric(Mean("x"))],
            source_table=source,
        )
    window = repository.query(
        source_table=source,
        after=T0 + dt.timedelta(days=1),
        before=T0 + dt.timedelta(days=3),
        names=["Size"],
    )
    assert [r.dataset_time.day for r in window] == [2, 3, 4]
    assert len(repository.query(source_table=source, tags={"env": "prod"})) == 4
    frame = repository.to_pandas(source_table=source, names=["Mean"])
    assert len(frame) == 5 and set(frame["tag_env"]) == {"prod", "dev"}
    deleted = repository.delete_older_than(2, now=T0 + dt.timedelta(days=4), source_table=source)
    assert deleted == 4 and len(repository.query(source_table=source)) == 6


def test_constraint_status_is_stored_with_the_metric(spark, repository, source):
    df = spark.createDataFrame([(1,), (None,)], "a int")
    check = Check(CheckLevel.WARNING, "complete a").is_complete("a")
    VerificationSuite(df).use_repository(repository, ResultKey(T0), source_table=source).add_check(
        check
    ).run()
    [record] = repository.query(source_table=source)
    assert (record.check_name, record.check_status, record.constraint_status) == (
        "complete a",
        "Warning",
        "Failure",
    )
    assert (
        repository.history(Completeness("a"), source_table=source, before=T0 + dt.timedelta(days=1))
        == []
    )  # failed runs left out


def test_source_and_time_queries_use_an_index(tmp_path):
    repository = MetricsRepository(f"sqlite:///{tmp_path / 'm.db'}")
    with repository.engine.connect() as connection:
        plan = connection.execute(
            sa.text(
                "EXPLAIN QUERY PLAN SELECT * FROM dq_metrics WHERE source_table = 'x' "
                "AND dataset_time >= '2026-01-01' AND dataset_time <= '2026-02-01'"
            )
        ).all()
    assert "ix_dq_metrics_source_time" in " ".join(str(row) for row in plan)


@pytest.mark.parametrize("required_first", [True, False])
def test_metrics_a_constraint_used_and_others_are_stored_together(
    spark, repository, source, required_first
):
    """One insert of many rows: whichever metric comes first, each row keeps its own constraint
    columns (NULL for a metric no constraint used)."""
    df = spark.createDataFrame([(1,), (2,)], "a int")
    check = Check(CheckLevel.ERROR, "a complete").is_complete("a")
    suite = VerificationSuite(df).use_repository(repository, ResultKey(T0), source_table=source)
    if required_first:
        suite = suite.add_required_analyzer(Size()).add_check(check)
    else:
        suite = suite.add_check(check).add_required_analyzer(Size())
    suite.run()
    records = {r.name: r for r in repository.query(source_table=source)}
    assert (records["Completeness"].check_name, records["Completeness"].constraint_status) == (
        "a complete",
        "Success",
    )
    assert (records["Size"].check_name, records["Size"].constraint_status) == (None, None)
