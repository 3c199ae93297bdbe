"""Run settings from the environment and `dq.toml`: the project database, receivers and the
escalation policy each check gets. Embedded defaults: SQLite, console and file receivers;
Slack, email and PagerDuty join when their environment variables are set."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from alerting import EscalationPolicy, FailingRowsLog, RetryPolicy, load_config
from alerting.config import published_url
from alerting.failing_rows import FAILING_ROWS_DIR_ENV, FAILING_ROWS_URL_ENV
from alerting.mutes import Mute
from alerting.receivers import (
    ConsoleReceiver,
    EmailReceiver,
    FileReceiver,
    PagerDutyReceiver,
    Receiver,
    SlackReceiver,
)
from checkers.deadlines import DEFAULT_DEADLINE_S
from checkers.levels import AlertLevel
from checkers.project_db import database_url as _database_url
from checks.loading import DEFAULT_PARALLELISM
from scheduling.outage import database_unavailable, unavailable
from scheduling.schema import project_database
from scheduling.worker_config import DEFAULT_STATE_DIR, STATE_DIR_ENV, refuse_relative_paths

if TYPE_CHECKING:
    from checks.partition_store import PartitionStore

CONFIG_ENV = "DQ_CONFIG"
DELIVERY_BUDGET_ENV = "DQ_DELIVERY_BUDGET_S"  # seconds one receiver may take per run


def state_dir() -> Path:
    return Path(os.environ.get(STATE_DIR_ENV, DEFAULT_STATE_DIR))


def _from_environment() -> tuple[dict[str, Receiver], dict[str, AlertLevel]]:
    """Receivers switched on by environment variables, with the level each hears."""
    receivers: dict[str, Receiver] = {
        "console": ConsoleReceiver(),
        "file": FileReceiver("file", state_dir() / "alerts.jsonl"),
    }
    routes = {"console": AlertLevel.WARNING, "file": AlertLevel.WARNING}
    env = os.environ
    if env.get("SLACK_BOT_TOKEN") and env.get("DQ_SLACK_CHANNEL"):
        receivers["slack"] = SlackReceiver("slack", env["DQ_SLACK_CHANNEL"])
        routes["slack"] = AlertLevel.WARNING
    if env.get("DQ_SMTP_HOST") and env.get("DQ_EMAIL_TO"):
        receivers["email"] = EmailReceiver(
            "email",
            host=env["DQ_SMTP_HOST"],
            port=int(env.get("DQ_SMTP_PORT", "587")),
            sender=env.get("DQ_EMAIL_FROM", "dq-checkers@localhost"),
            recipients=[a.strip() for a in env["DQ_EMAIL_TO"].split(",")],
            username_env="DQ_SMTP_USER" if env.get("DQ_SMTP_USER") else None,
            password_env="DQ_SMTP_PASSWORD" if env.get("DQ_SMTP_PASSWORD") else None,
        )
        routes["email"] = AlertLevel.ERROR
    if env.get("PAGERDUTY_ROUTING_KEY"):
        receivers["pagerduty"] = PagerDutyReceiver("pagerduty")
        routes["pagerduty"] = AlertLevel.CRITICAL
    return receivers, routes


@dataclass
class Settings:
    """Everything a run needs besides the checks and the time."""

    engine: Engine
    receivers: dict[str, Receiver]
    default_policy: EscalationPolicy
    #: Seconds a source may take to load (a parser's own `deadline_s` wins), and how many load at
    #: once; from DQ_SOURCE_DEADLINE_S and DQ_LOAD_PARALLELISM.
    source_deadline_s: float = DEFAULT_DEADLINE_S
    load_parallelism: int = DEFAULT_PARALLELISM
    mutes: list[Mute] = field(default_factory=list)
    failing_rows: FailingRowsLog | None = None
    delivery: RetryPolicy = field(default_factory=RetryPolicy)
    spool_dir: Path = field(default_factory=lambda: state_dir() / "spool")
    #: Why the project database is unavailable in this run (None: usable); scheduling.outage
    database_error: str | None = None

    def partition_store(self) -> PartitionStore | None:
        """Where incremental checks keep their partitions' states; None while the database is
        unavailable (they then read everything)."""
        if self.database_error is not None:
            return None
        from checks.partition_store import PartitionStore

        return PartitionStore(self.engine, state_dir() / "states")

    def policy_for(self, check: object) -> EscalationPolicy:
        policy = getattr(check, "escalation", None)
        return policy if isinstance(policy, EscalationPolicy) else self.default_policy

    @classmethod
    def from_environment(
        cls,
        *,
        database_url: str | None = None,
        config_path: str | Path | None = None,
        receivers: Mapping[str, Receiver] | None = None,
    ) -> Settings:
        refuse_relative_paths(database_url=database_url)  # under Airflow: shared state only
        found, routes = _from_environment()
        path = Path(config_path or os.environ.get(CONFIG_ENV, "dq.toml"))
        policy = EscalationPolicy(routes=routes, escalate_after_runs=4)
        mutes: list[Mute] = []
        rows: tuple[Path | None, str | None] = (None, None)
        if path.exists():
            config = load_config(path, known_receivers=[*found, *(receivers or {})])
            found.update(config.receivers)
            policy = config.policies.get("default", policy)
            mutes.extend(config.silences)
            rows = (config.failing_rows_directory, config.failing_rows_url)
        found.update(receivers or {})
        deadline_s, parallelism = _load_limits()
        problem: sa.exc.SQLAlchemyError | None = None
        try:
            engine = project_database(database_url)
        except sa.exc.SQLAlchemyError as exc:  # the run still evaluates, and spools
            if not unavailable(exc):
                raise
            engine, problem = sa.create_engine(_database_url(database_url)), exc
        settings = cls(
            engine=engine,
            receivers=found,
            source_deadline_s=deadline_s,
            load_parallelism=parallelism,
            default_policy=policy,
            mutes=mutes,
            failing_rows=failing_rows_log(*rows),
            delivery=RetryPolicy(budget_s=float(os.environ.get(DELIVERY_BUDGET_ENV, "60"))),
        )
        if problem is not None:
            database_unavailable(settings, problem)
        return settings


def failing_rows_log(directory: Path | None = None, base_url: str | None = None) -> FailingRowsLog:
    """Where failing rows go and how alerts link to them: DQ_FAILING_ROWS_DIR and
    DQ_FAILING_ROWS_URL, else dq.toml's [failing_rows] (given), else `$DQ_STATE_DIR/failing`
    and file links."""
    env = os.environ
    if env.get(FAILING_ROWS_DIR_ENV):
        directory = Path(env[FAILING_ROWS_DIR_ENV]).resolve()
    if env.get(FAILING_ROWS_URL_ENV):
        base_url = published_url(env[FAILING_ROWS_URL_ENV], FAILING_ROWS_URL_ENV)
    return FailingRowsLog(directory or state_dir() / "failing", base_url=base_url)


SOURCE_DEADLINE_ENV = "DQ_SOURCE_DEADLINE_S"
LOAD_PARALLELISM_ENV = "DQ_LOAD_PARALLELISM"


def _load_limits() -> tuple[float, int]:
    """Source deadline and load parallelism from the environment; a bad value names its variable."""
    env = os.environ
    try:
        seconds = float(env.get(SOURCE_DEADLINE_ENV, DEFAULT_DEADLINE_S))
    except ValueError:
        seconds = math.nan
    try:
        parallel = int(env.get(LOAD_PARALLELISM_ENV, DEFAULT_PARALLELISM))
    except ValueError:
        parallel = 0
    if not (math.isfinite(seconds) and seconds > 0):
        raise ValueError(f"{SOURCE_DEADLINE_ENV} must be a positive number of seconds")
    if parallel < 1:
        raise ValueError(f"{LOAD_PARALLELISM_ENV} must be a whole number, at least 1")
    return seconds, parallel
