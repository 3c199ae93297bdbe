"""The Connect pass stays honest: every Connect-specific function of the library (found in its
source by tests/connect_paths.py) is listed there, so the Connect pass checks that a
`connect`-marked test calls it, or names the test that runs it on a real Connect server."""

from __future__ import annotations

import inspect

from checkers.spark import spark_target as imported_here
from tests.connect_paths import (
    IN_SUBPROCESS,
    OVER_CONNECT,
    ROOT,
    UNRELATED,
    connect_sites,
    resolve,
    watch,
)


def test_every_connect_specific_function_is_listed() -> None:
    listed = {*OVER_CONNECT, *IN_SUBPROCESS, *UNRELATED}
    unlisted = sorted(connect_sites() - listed)
    assert unlisted == [], (
        "Connect-specific code without a Connect test: add each to OVER_CONNECT in "
        "tests/connect_paths.py and mark a test that calls it `@pytest.mark.connect`"
    )
    assert len(listed) == len(OVER_CONNECT) + len(IN_SUBPROCESS) + len(UNRELATED)


def test_every_listed_function_exists() -> None:
    for site in [*OVER_CONNECT, *IN_SUBPROCESS, *UNRELATED]:
        resolve(site)  # raises when renamed or moved
    for site in OVER_CONNECT:
        assert inspect.isfunction(resolve(site)[2]), f"{site}: the Connect pass cannot watch it"


def test_the_subprocess_tests_named_exist() -> None:
    for site, test in IN_SUBPROCESS.items():
        path, _, name = test.partition("::")
        assert f"def {name}(" in (ROOT / path).read_text(), f"{site}: {test} is gone"


def test_watching_records_calls_made_through_any_import_and_is_undone() -> None:
    import checkers
    import checkers.spark

    original = checkers.spark.spark_target
    assert checkers.spark_target is original  # the package's lazy re-export, now in its globals
    called: set[str] = set()
    undo = watch(["checkers.spark:spark_target"], called)
    try:
        assert checkers.spark_target is not original  # the re-export is watched too
        imported_here(environ={})  # this module's `from checkers.spark import ...`
    finally:
        undo()
    assert called == {"checkers.spark:spark_target"}
    assert checkers.spark_target is original and imported_here is original
