"""The pytest plugin of dq-checkers (entry point `pytest11`): a session-scoped `spark` fixture and
`assert_outcome`, so a team's check tests need no conftest. A project's own `spark` fixture
(in a conftest.py) wins over this one. Spark is imported only when a test asks for it. The check
packages dq.toml names import from beside it, as they do for `dq`.

    def test_unknown_airport_is_critical(spark):
        assert_outcome(FlightsLandAtKnownAirports, level=AlertLevel.CRITICAL, rows=...)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: A handful of rows needs few partitions; set on local sessions and on Spark Connect alike.
TEST_CONFIG = {"spark.sql.shuffle.partitions": "2"}


def pytest_configure(config: pytest.Config) -> None:
    from checkers.check_packages import configured_packages

    configured_packages().make_importable()


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    """One SparkSession for the test run: local (UI and progress bars off), or the Spark Connect
    server of DQ_SPARK_REMOTE (`checkers.spark_session`)."""
    from checkers.spark import spark_session

    session = spark_session(app_name="dq-checkers-tests", config=TEST_CONFIG)
    yield session
    session.stop()


@pytest.fixture
def assert_outcome() -> Callable[..., object]:
    """`checks.testing.assert_outcome`, for tests that prefer a fixture to an import."""
    from checks.testing import assert_outcome

    return assert_outcome
