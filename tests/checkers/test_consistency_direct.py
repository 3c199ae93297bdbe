"""When most cells of a level differ, the next level is cut at once to cells of a few rows, and
only the rows of those that differ are fetched; when few differ, the bisection goes on. Two
SQLite tables of 20,000 rows, keys 1..20,000: the first level cuts them into 1,250 cells of 16
rows, above the threshold of 8."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

import sqlalchemy as sa

from checkers.consistency import ConsistencyChecker, SqlTable, grid

ROWS = 20_000
CELL = 16  # rows per first-level cell (20,000 keys, at most 4,096 cells, factor 4)
SMALL = {"bisection_factor": 4, "bisection_threshold": 8}


def _table(path: Path, changed: set[int], missing: Collection[int], kind: str) -> str:
    url = f"sqlite:///{path}"
    engine = sa.create_engine(url)
    with engine.begin() as connection:
        connection.exec_driver_sql(
            f"CREATE TABLE t (id {kind} PRIMARY KEY, name TEXT, amount REAL)"
        )
        connection.exec_driver_sql(
            "INSERT INTO t VALUES (?, ?, ?)",
            [
                (n if kind == "INTEGER" else f"k{n}", f"row {n}", n * 0.5 + (n in changed))
                for n in range(1, ROWS + 1)
                if n not in missing
            ],
        )
    engine.dispose()
    return url


def _compare(
    tmp_path: Path, changed: set[int], missing: set[int], kind: str = "INTEGER", **options: int
) -> dict[str, float]:
    """The comparison's metrics, once its differences were checked to be exactly those made."""
    left = _table(tmp_path / "left.db", set(), (), kind)
    right = _table(tmp_path / "right.db", changed, missing, kind)
    checker = ConsistencyChecker(
        SqlTable(left, "t"), SqlTable(right, "t"), key="id", **{**SMALL, **options}
    )
    result = checker.run()
    assert result.error is None, result.error
    found = {(row["difference"], row["id"]) for row in checker.differences()}
    key = (lambda n: n) if kind == "INTEGER" else (lambda n: f"k{n}")
    assert found == {
        *(("differing", key(k)) for k in changed),
        *(("missing_in_right", key(k)) for k in missing),
    }
    return result.metrics


def test_when_most_cells_differ_the_next_level_is_cut_to_a_few_rows_a_cell(tmp_path):
    # every 20th key differs: 1,000 of the 1,250 cells, each holding one difference
    changed = set(range(20, ROWS + 1, 40))
    missing = set(range(40, ROWS + 1, 40))
    metrics = _compare(tmp_path, changed, missing)
    assert metrics["levels"] == 2 and metrics["deep_cut"] == 1
    # the 16,000 rows of the differing cells, 1,000 differences: cells of sqrt(16,000 / 4,000)
    # = 2 keys, each differing one fetched whole (the right lacks the 500 missing rows)
    assert metrics["rows_fetched_left"] == 2 * 1_000
    assert metrics["rows_fetched_right"] == 2 * 1_000 - len(missing)
    # the key's bounds; the first level; the second (keys 17..20,000 as one range); the 1,000
    # differing 2-key ranges, 256 to a statement
    assert metrics["queries_left"] == 1 + 1 + 1 + 4


def test_a_text_key_is_cut_deep_too(tmp_path):
    """A text key places rows by a hash of it: 20,000 rows in 256 first-level cells of about 78,
    1,000 differences spread over nearly all of them."""
    changed = set(range(20, ROWS + 1, 20))
    metrics = _compare(tmp_path, changed, set(), "TEXT", first_level_cells=256)
    assert metrics["deep_cut"] == 1
    assert metrics["rows_fetched_left"] == metrics["rows_fetched_right"]
    assert len(changed) <= metrics["rows_fetched_left"] <= 8 * len(changed)


def test_few_differing_cells_are_cut_finer(tmp_path):
    changed = {1, 5_000, 12_345, 19_999}
    metrics = _compare(tmp_path, changed, set())
    assert metrics["levels"] >= 2 and metrics["deep_cut"] == 0
    assert metrics["rows_fetched_left"] <= len(changed) * SMALL["bisection_threshold"]


def test_ranges_cover_the_differing_cells_with_the_equal_ones_between(monkeypatch):
    monkeypatch.setattr(grid, "SPAN_ROWS", 5_000)
    cells = [
        ((0, 16), 1_000, False),  # before the first differing cell: left out
        ((16, 32), 1_000, True),
        ((32, 48), 1_000, False),  # between two differing cells: comes along
        ((48, 64), 2_000, True),
        ((64, 80), 2_000, True),  # 6,000 rows with the range so far: a range of its own
        ((80, 96), 9_000, True),  # alone above the bound: a range of its own all the same
        ((96, 112), 10, False),  # after the last differing cell: left out
    ]
    assert list(grid.spans(cells)) == [(16, 64), (64, 80), (80, 96)]
    assert list(grid.spans([((0, 16), 5, False)])) == []


def test_the_deep_cut_balances_cells_against_fetched_rows():
    # 9.1 M rows in 3,740 differing cells of 65,536 keys: cells of 25 rows (sqrt(608))
    assert grid.deep_width(65_536, 9_100_000, 3_740, 64) == 65_536 * 25 * 3_740 // 9_100_000
    # never above the threshold: 10^8 rows in 100 cells would ask for 500 rows a cell
    assert grid.deep_width(2**30, 10**8, 100, 64) == 2**30 * 64 * 100 // 10**8
    # never below one key
    assert grid.deep_width(4, 100, 90, 64) == 3
    assert grid.deep_width(1, 100, 90, 64) == 1
