"""A small demo warehouse (three days of January 2013, five flights of January 2 lost on the way
to the lake), built once for the example-check tests."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterator

import pytest

from checks.examples._demo import DEMO_DATABASE_ENV, DEMO_DIR_ENV
from examples.warehouse import Warehouse, build_warehouse

#: The runs below happen on January 3, 2013 at noon: "yesterday" is January 2.
NOW = dt.datetime(2013, 1, 3, 12, 0, tzinfo=dt.UTC)
LAKE_GAPS = {(1, 2): 5}


@pytest.fixture(scope="session")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Warehouse]:
    root = tmp_path_factory.mktemp("demo")
    built = build_warehouse(root, months=[1], days=[1, 2, 3], lake_gaps=LAKE_GAPS)
    saved = {k: os.environ.get(k) for k in (DEMO_DIR_ENV, DEMO_DATABASE_ENV)}
    os.environ[DEMO_DIR_ENV] = str(root)
    os.environ.pop(DEMO_DATABASE_ENV, None)
    yield built
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
