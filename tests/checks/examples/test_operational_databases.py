"""The operational side of the demo on PostgreSQL and MariaDB: the same checks give the same
outcomes as on SQLite."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from checkers import Status
from checks.examples import OperationalTablesFresh, OpsAndLakeDailyTotals, OpsAndLakeFlightsMatch
from checks.examples._demo import DEMO_DATABASE_ENV, DEMO_DIR_ENV
from examples.warehouse import build_warehouse
from scheduling.tick.evaluate import evaluate_checks
from tests.checks.examples.conftest import LAKE_GAPS, NOW
from tests.conftest import MARIADB_URL, POSTGRES_URL


@pytest.fixture
def postgres_url() -> Iterator[str]:
    schema = f"dq_demo_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(POSTGRES_URL)
    with admin.begin() as connection:
        connection.execute(sa.text(f"CREATE SCHEMA {schema}"))
    yield f"{POSTGRES_URL}?options=-csearch_path%3D{schema}"
    with admin.begin() as connection:
        connection.execute(sa.text(f"DROP SCHEMA {schema} CASCADE"))
    admin.dispose()


@pytest.fixture
def mariadb_url() -> Iterator[str]:
    database = f"dq_demo_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(MARIADB_URL)
    with admin.begin() as connection:
        connection.execute(sa.text(f"CREATE DATABASE {database}"))
    yield MARIADB_URL.rsplit("/", 1)[0] + f"/{database}"
    with admin.begin() as connection:
        connection.execute(sa.text(f"DROP DATABASE {database}"))
    admin.dispose()


@pytest.mark.parametrize(
    "kind",
    [
        pytest.param("postgres", marks=pytest.mark.postgres),
        pytest.param("mariadb", marks=pytest.mark.mariadb),
    ],
)
def test_checks_against_the_operational_database(spark, tmp_path, monkeypatch, request, kind):
    url = request.getfixturevalue(f"{kind}_url")
    build_warehouse(tmp_path, database_url=url, months=[1], days=[1, 2, 3], lake_gaps=LAKE_GAPS)
    monkeypatch.setenv(DEMO_DIR_ENV, str(tmp_path))
    monkeypatch.setenv(DEMO_DATABASE_ENV, url)
    fresh, rows, totals = evaluate_checks(
        [OperationalTablesFresh, OpsAndLakeFlightsMatch, OpsAndLakeDailyTotals],
        spark=spark,
        now=NOW,
    )
    assert fresh.status is Status.PASSED, fresh.summary()
    assert (rows.failing, rows.metrics["missing_in_right"]) == (5, 5), rows.summary()
    assert (totals.failing, totals.failing_keys) == (1, ((1, 2),)), totals.summary()
