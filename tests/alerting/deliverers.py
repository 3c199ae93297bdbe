"""`dq deliver` as a real process against the loopback servers: its dq.toml, its environment,
and project databases on SQLite, PostgreSQL and MariaDB that a test creates and drops."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlalchemy as sa

from tests.alerting.conftest import PAGERDUTY_KEY, SLACK_TOKEN
from tests.alerting.servers import loopback_receivers_toml
from tests.conftest import MARIADB_URL, POSTGRES_URL

REPO = Path(__file__).resolve().parents[2]


def deliverer_env(tmp_path: Path, url: str, http: str, smtp_port: int, cert: Path) -> dict:
    config = tmp_path / "dq.toml"
    config.write_text(loopback_receivers_toml(http, smtp_port, timeout_s=10))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DQ_", "SLACK", "PAGERDUTY"))}
    env.update(
        PYTHONPATH=str(REPO),
        DQ_DATABASE_URL=url,
        DQ_CONFIG=str(config),
        DQ_STATE_DIR=str(tmp_path / "state"),
        SLACK_BOT_TOKEN=SLACK_TOKEN,
        PAGERDUTY_ROUTING_KEY=PAGERDUTY_KEY,
        SSL_CERT_FILE=str(cert),  # the default verifying context trusts the test certificate
    )
    return env


def start_deliver(env: dict, at: dt.datetime) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "scheduling.cli", "deliver", "--at", at.isoformat()],
        env=env,
        cwd=Path(env["DQ_CONFIG"]).parent,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def deliver(env: dict, at: dt.datetime) -> str:
    process = start_deliver(env, at)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    return out


@contextmanager
def database(kind: str, tmp_path: Path) -> Iterator[str]:
    """A fresh project database URL: a SQLite file, or a uniquely named database on the
    shared PostgreSQL or MariaDB server, dropped afterwards."""
    if kind == "sqlite":
        yield f"sqlite:///{tmp_path / 'dq.db'}"
        return
    server = POSTGRES_URL if kind == "postgres" else MARIADB_URL
    name = f"dq_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(server, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.exec_driver_sql(f"CREATE DATABASE {name}")
    try:
        yield str(sa.make_url(server).set(database=name).render_as_string(hide_password=False))
    finally:
        with admin.connect() as connection:
            force = " WITH (FORCE)" if kind == "postgres" else ""
            connection.exec_driver_sql(f"DROP DATABASE IF EXISTS {name}{force}")
        admin.dispose()
