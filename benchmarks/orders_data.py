"""TPC-H `orders` (tpchgen-cli) at a given row count, as Parquet and as a table in PostgreSQL and
in MariaDB (primary key o_orderkey), built once and reused; and differences applied to the
PostgreSQL copy and undone again (benchmarks/consistency.py)."""

from __future__ import annotations

import math
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pymysql
import sqlalchemy as sa

from benchmarks.data import tpchgen_command

ORDERS_PER_SF = 1_500_000
COLUMNS = (
    "o_orderkey",
    "o_custkey",
    "o_orderstatus",
    "o_totalprice",
    "o_orderdate",
    "o_orderpriority",
    "o_clerk",
    "o_shippriority",
    "o_comment",
)
_DDL = (
    "o_orderkey BIGINT {pk}, o_custkey BIGINT NOT NULL, o_orderstatus CHAR(1) NOT NULL, "
    "o_totalprice DECIMAL(15,2) NOT NULL, o_orderdate DATE NOT NULL, "
    "o_orderpriority VARCHAR(15) NOT NULL, o_clerk VARCHAR(15) NOT NULL, "
    "o_shippriority INTEGER NOT NULL, o_comment VARCHAR(79) NOT NULL"
)
#: TPC-H uses only the first 8 order keys of every 32: key + 8 is always free, and lies in the
#: same key range as key (so inserted rows are spread like the others).
_FREE_OFFSET = 8
_BUILT = "dq_bench_built"


@dataclass(frozen=True)
class Orders:
    """Where one size of the data lives."""

    rows: int
    parquet: Path
    table: str
    postgres_url: str
    mariadb_url: str


def scale_factor(rows: int) -> str:
    """The scale factor giving `rows` orders (rounded up: tpchgen-cli truncates)."""
    return f"{math.ceil(rows / ORDERS_PER_SF * 1e9) / 1e9:.9f}"


def build(rows: int, data: Path, postgres_url: str, mariadb_url: str) -> tuple[Orders, float]:
    """The data for `rows` orders, built where missing; also the seconds the build took."""
    start = time.perf_counter()
    root = data / f"orders_{rows}"
    csv, parquet = root / "csv" / "orders.csv", root / "parquet" / "orders.parquet"
    for fmt, path in (("csv", csv), ("parquet", parquet)):
        if not path.exists():
            subprocess.run(
                [
                    tpchgen_command(),
                    fmt,
                    f"--scale-factor={scale_factor(rows)}",
                    "--tables=orders",
                    f"--output-dir={path.parent}",
                    "--overwrite",
                    "--quiet",
                ],
                check=True,
            )
    orders = Orders(rows, parquet, f"orders_{rows}", postgres_url, mariadb_url)
    if not _built(postgres_url, orders.table):
        _load_postgres(postgres_url, orders.table, csv)
    if not _built(mariadb_url, orders.table):
        _load_mariadb(mariadb_url, orders.table, csv)
    return orders, time.perf_counter() - start


def ensure_database(url: str) -> None:
    """Create the URL's database on its server if it does not exist."""
    parsed = sa.make_url(url)
    postgres = parsed.get_backend_name() == "postgresql"
    server = parsed.set(database="postgres" if postgres else "mysql")
    engine = sa.create_engine(server, isolation_level="AUTOCOMMIT")
    with engine.connect() as connection:
        if postgres:
            found = connection.exec_driver_sql(
                "SELECT 1 FROM pg_database WHERE datname = %(name)s", {"name": parsed.database}
            ).first()
            if not found:
                connection.exec_driver_sql(f'CREATE DATABASE "{parsed.database}"')
        else:
            connection.exec_driver_sql(f"CREATE DATABASE IF NOT EXISTS `{parsed.database}`")
    engine.dispose()


def _built(url: str, table: str) -> bool:
    engine = sa.create_engine(url)
    with engine.begin() as connection:
        connection.exec_driver_sql(
            f"CREATE TABLE IF NOT EXISTS {_BUILT} (name VARCHAR(100) PRIMARY KEY)"
        )
        found = connection.execute(
            sa.text(f"SELECT 1 FROM {_BUILT} WHERE name = :name"), {"name": table}
        ).first()
    engine.dispose()
    return found is not None


def _mark_built(connection: sa.Connection, table: str) -> None:
    connection.execute(sa.text(f"INSERT INTO {_BUILT} (name) VALUES (:name)"), {"name": table})


def _load_postgres(url: str, table: str, csv: Path) -> None:
    engine = sa.create_engine(url)
    with engine.begin() as connection:
        connection.exec_driver_sql(f"DROP TABLE IF EXISTS {table}")
        connection.exec_driver_sql(f"CREATE TABLE {table} ({_DDL.format(pk='NOT NULL')})")
        cursor = connection.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
        # FREEZE: created in this transaction, so no hint-bit writes on the first reads.
        with (
            cursor.copy(f"COPY {table} FROM STDIN (FORMAT csv, HEADER true, FREEZE)") as copy,
            csv.open("rb") as source,
        ):
            while block := source.read(1 << 20):
                copy.write(block)
        connection.exec_driver_sql(f"ALTER TABLE {table} ADD PRIMARY KEY (o_orderkey)")
        _mark_built(connection, table)
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        connection.exec_driver_sql(f"VACUUM ANALYZE {table}")
    engine.dispose()


def _load_mariadb(url: str, table: str, csv: Path) -> None:
    parsed = sa.make_url(url)
    # LOAD DATA LOCAL needs the client's local_infile flag; rows arrive in key order, so the
    # clustered primary key is filled sequentially.
    connection = pymysql.connect(
        host=parsed.host,
        port=parsed.port or 3306,
        user=parsed.username,
        password=parsed.password or "",
        database=parsed.database,
        local_infile=True,
        autocommit=False,
    )
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE IF EXISTS {table}")
        cursor.execute(f"CREATE TABLE {table} ({_DDL.format(pk='PRIMARY KEY')}) ENGINE=InnoDB")
        cursor.execute("SET SESSION unique_checks = 0")
        cursor.execute(
            f"LOAD DATA LOCAL INFILE %s INTO TABLE {table} FIELDS TERMINATED BY ',' "
            "OPTIONALLY ENCLOSED BY '\"' LINES TERMINATED BY '\\n' IGNORE 1 LINES",
            (str(csv),),
        )
        cursor.execute(f"INSERT INTO {_BUILT} (name) VALUES (%s)", (table,))
        cursor.execute(f"ANALYZE TABLE {table}")
    connection.commit()
    connection.close()


@dataclass(frozen=True)
class Differences:
    """Differences applied to the PostgreSQL copy (left) against the unchanged data (right)."""

    deleted: int  # missing in left
    inserted: int  # missing in right
    updated: int  # differing

    @property
    def total(self) -> int:
        return self.deleted + self.inserted + self.updated


def apply_differences(url: str, table: str, count: int) -> Differences:
    """Delete a third, insert a third and update (o_totalprice + 0.01) a third of `count` rows,
    keys spread over the whole key range (a fixed pseudo-random sample). `restore` undoes it."""
    restore(url, table)
    deleted, updated = count // 3, count // 3
    inserted = count - deleted - updated
    if count == 0:
        return Differences(0, 0, 0)
    engine = sa.create_engine(url)
    with engine.begin() as connection:
        sample = f"SELECT o_orderkey FROM {table} ORDER BY md5(o_orderkey::text) LIMIT {count}"
        keys = [r[0] for r in connection.exec_driver_sql(sample)]
        gone, changed, copied = keys[:deleted], keys[deleted : deleted + updated], keys[-inserted:]
        connection.exec_driver_sql(
            f"CREATE TABLE {table}_saved AS SELECT * FROM {table} WHERE o_orderkey = ANY(%(k)s)",
            {"k": gone + changed},
        )
        connection.exec_driver_sql(
            f"CREATE TABLE {table}_inserted AS SELECT o_orderkey + {_FREE_OFFSET} AS o_orderkey "
            f"FROM {table} WHERE o_orderkey = ANY(%(k)s)",
            {"k": copied},
        )
        connection.exec_driver_sql(
            f"DELETE FROM {table} WHERE o_orderkey = ANY(%(k)s)", {"k": gone}
        )
        connection.exec_driver_sql(
            f"UPDATE {table} SET o_totalprice = o_totalprice + 0.01 WHERE o_orderkey = ANY(%(k)s)",
            {"k": changed},
        )
        others = ", ".join(COLUMNS[1:])
        added = connection.exec_driver_sql(
            f"INSERT INTO {table} SELECT o_orderkey + {_FREE_OFFSET}, {others} FROM {table} "
            f"WHERE o_orderkey = ANY(%(k)s) ON CONFLICT DO NOTHING",
            {"k": copied},
        ).rowcount
        if added != inserted:
            raise RuntimeError(f"{inserted - added} inserted keys were taken: not TPC-H keys?")
    _analyze(engine, table)
    return Differences(deleted, inserted, updated)


def restore(url: str, table: str) -> None:
    """Undo `apply_differences` (also after a run that stopped half-way)."""
    engine = sa.create_engine(url)
    with engine.begin() as connection:
        if not sa.inspect(connection).has_table(f"{table}_saved"):
            engine.dispose()
            return
        connection.exec_driver_sql(
            f"DELETE FROM {table} WHERE o_orderkey IN (SELECT o_orderkey FROM {table}_saved) "
            f"OR o_orderkey IN (SELECT o_orderkey FROM {table}_inserted)"
        )
        connection.exec_driver_sql(f"INSERT INTO {table} SELECT * FROM {table}_saved")
        connection.exec_driver_sql(f"DROP TABLE {table}_saved, {table}_inserted")
    _analyze(engine, table)


def _analyze(engine: sa.Engine, table: str) -> None:
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        connection.exec_driver_sql(f"VACUUM ANALYZE {table}")
    engine.dispose()
