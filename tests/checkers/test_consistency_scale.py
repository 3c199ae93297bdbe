"""What moves: 10 differences in a million rows, PostgreSQL against MariaDB. The data is made
inside each database, and the number of rows that leave either one is asserted (in rows, not
seconds): under 1%."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from checkers.consistency import ConsistencyChecker, SqlTable
from tests.scheduling.databases import fresh_database, run_sql

# A million rows in PostgreSQL and in MariaDB. `make test-fast` skips it.
pytestmark = pytest.mark.slow

ROWS = 1_000_000
DELETED = (17, 500_000, 999_999)  # from MariaDB: missing in the right
INSERTED = (1_000_500, 1_000_501, 0)  # into MariaDB only: missing in the left
UPDATED = (1, 123_457, 654_321, 1_000_000)


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[tuple[str, str]]:
    with (
        fresh_database("postgres", tmp_path) as postgres,
        fresh_database("mariadb", tmp_path) as mariadb,
    ):
        yield postgres, mariadb


@pytest.mark.postgres
@pytest.mark.mariadb
def test_ten_differences_in_a_million_rows_move_under_one_percent(
    pair: tuple[str, str],
) -> None:
    postgres, mariadb = pair
    run_sql(
        postgres,
        "CREATE TABLE t (id bigint PRIMARY KEY, name text, amount double precision)",
        f"INSERT INTO t SELECT g, md5(g::text), g * 0.5 FROM generate_series(1, {ROWS}) g",
    )
    run_sql(
        mariadb,
        "CREATE TABLE t (id bigint PRIMARY KEY, name varchar(40), amount double)",
        f"INSERT INTO t SELECT seq, md5(seq), seq * 0.5 FROM seq_1_to_{ROWS}",
        f"DELETE FROM t WHERE id IN {DELETED}",
        *(f"INSERT INTO t VALUES ({k}, 'new', 1.0)" for k in INSERTED),
        f"UPDATE t SET amount = amount + 1 WHERE id IN {UPDATED}",
    )
    checker = ConsistencyChecker(SqlTable(postgres, "t"), SqlTable(mariadb, "t"), key="id")
    result = checker.run()
    assert result.error is None, result.error
    found = {(row["difference"], row["id"]) for row in checker.differences()}
    assert found == {
        *(("missing_in_right", k) for k in DELETED),
        *(("missing_in_left", k) for k in INSERTED),
        *(("differing", k) for k in UPDATED),
    }
    assert result.total == ROWS + len(INSERTED)
    moved = result.metrics["rows_fetched_left"], result.metrics["rows_fetched_right"]
    print(f"rows fetched of {ROWS:,}: PostgreSQL {moved[0]:,}, MariaDB {moved[1]:,}")
    assert max(moved) < ROWS // 100
