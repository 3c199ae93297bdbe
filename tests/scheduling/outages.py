"""The project database goes away under `dq run`: the runs' environment (checks of
tests.scheduling.cli_fixture_checks on a CSV, the default console and file receivers), their
spool and alert file, and a PostgreSQL database switched read-only and back
(tests/scheduling/test_outage.py)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import sqlalchemy as sa

from scheduling.schema import project_database
from tests.conftest import POSTGRES_URL
from tests.scheduling import in_process

ROOT = Path(__file__).resolve().parents[2]


def outage_env(tmp_path: Path) -> dict[str, str]:
    csv = tmp_path / "numbers.csv"
    csv.write_text("n,label\n1,a\n-2,b\n")  # cli_positive fails (ERROR), cli_labelled passes
    return {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "DQ_CHECKS": "tests.scheduling.cli_fixture_checks",
        "DQ_CLI_CSV": str(csv),
        "DQ_STATE_DIR": str(tmp_path / "state"),
        "DQ_CONFIG": str(tmp_path / "none.toml"),  # embedded default: console and file
    }


def dq(env: dict[str, str], url: sa.URL, *args: str) -> subprocess.CompletedProcess[str]:
    """`dq ARGS` on the database at `url`, in this process (tests/scheduling/in_process.py)."""
    return in_process.dq(
        {**env, "DQ_DATABASE_URL": url.render_as_string(hide_password=False)},
        *args,
        cwd=Path(env["DQ_STATE_DIR"]).parent,
    )


def spooled(env: dict[str, str]) -> list[dict]:
    path = Path(env["DQ_STATE_DIR"]) / "spool" / "outcomes.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def alerts(env: dict[str, str]) -> list[dict]:
    path = Path(env["DQ_STATE_DIR"]) / "alerts.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def read_only(url: sa.URL, on: bool) -> None:
    """The server refuses every write in new sessions of this database."""
    admin = sa.create_engine(POSTGRES_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(
            sa.text(
                f"ALTER DATABASE {url.database} SET default_transaction_read_only = "
                f"{'on' if on else 'off'}"
            )
        )
    admin.dispose()


def read_only_then_writable(
    url: sa.URL, env: dict[str, str]
) -> Iterator[subprocess.CompletedProcess[str]]:
    """Yields a `dq run --due` at 07:00 on the database made read-only, then, writable again,
    the run at 07:10."""
    project_database(url.render_as_string(hide_password=False)).dispose()
    read_only(url, True)
    yield dq(env, url, "run", "--due", "--at", "2026-11-22T07:00:00")
    read_only(url, False)
    yield dq(env, url, "run", "--due", "--at", "2026-11-22T07:10:00")
