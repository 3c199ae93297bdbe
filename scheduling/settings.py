"""Run settings built from a `Config` (scheduling.config, the environment and `dq.toml`): the
project database, receivers and the escalation policy each check gets. Embedded defaults: SQLite,
console and file receivers; Slack, email and PagerDuty join when their environment variables are
set."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from alerting import EscalationPolicy, FailingRowsLog, RetryPolicy
from alerting.config import config_from_document, http_url, published_url
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
from scheduling.airflow.worker_config import refuse_relative_paths
from scheduling.config import (
    FAILING_ROWS_URL_ENV,
    LOAD_PARALLELISM_ENV,
    METADATA_ANSWERS_ENV,
    SERVE_URL_ENV,
    SOURCE_DEADLINE_ENV,
    Config,
    state_path,
)
from scheduling.outage import database_unavailable, unavailable
from scheduling.schema import project_database
from scheduling.tick.sources import DEFAULT_PARALLELISM

if TYPE_CHECKING:
    from scheduling.tick.partition_store import PartitionStore


def _switched_on(config: Config) -> tuple[dict[str, Receiver], dict[str, AlertLevel]]:
    """Receivers switched on by environment variables, with the level each hears."""
    receivers: dict[str, Receiver] = {
        "console": ConsoleReceiver(),
        "file": FileReceiver("file", config.state_path / "alerts.jsonl"),
    }
    routes = {"console": AlertLevel.WARNING, "file": AlertLevel.WARNING}
    if config.slack_channel:
        receivers["slack"] = SlackReceiver("slack", config.slack_channel)
        routes["slack"] = AlertLevel.WARNING
    if (email := config.email) is not None:
        receivers["email"] = EmailReceiver(
            "email",
            host=email.host,
            port=int(email.port),
            sender=email.sender,
            recipients=list(email.recipients),
            username_env=email.username_env,
            password_env=email.password_env,
        )
        routes["email"] = AlertLevel.ERROR
    if config.pagerduty:
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
    #: Metrics the sources' file statistics answer exactly come from them (DQ_METADATA_ANSWERS,
    #: `dq run --no-metadata` turns it off for one run).
    metadata_answers: bool = True
    mutes: list[Mute] = field(default_factory=list)
    failing_rows: FailingRowsLog | None = None
    delivery: RetryPolicy = field(default_factory=RetryPolicy)
    state_dir: Path = field(default_factory=state_path)
    spool_dir: Path = field(default_factory=lambda: state_path() / "spool")
    #: Why the project database is unavailable in this run (None: usable); scheduling.outage
    database_error: str | None = None
    #: What the settings were built from (None: built in code).
    config: Config | None = None
    #: Where `dq serve` is reached (DQ_SERVE_URL): alerts link to `{serve_url}/incidents/{id}`.
    serve_url: str | None = None
    #: Whether an open inhibitor's incident holds back what it explains, and incidents opening
    #: together are grouped (alerting.md, "Grouping and inhibition"); off: each check notifies
    #: on its own, as before either existed (the demo's comparison).
    inhibition: bool = True
    grouping: bool = True

    def partition_store(self) -> PartitionStore | None:
        """Where incremental checks keep their partitions' states; None while the database is
        unavailable (they then read everything)."""
        if self.database_error is not None:
            return None
        from scheduling.tick.partition_store import PartitionStore

        return PartitionStore(self.engine, self.state_dir / "states")

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
        config: Config | None = None,
    ) -> Settings:
        """Settings of `config` (default: read from the environment now); `database_url` and
        `config_path` (without `config`) stand for DQ_DATABASE_URL and DQ_CONFIG; `receivers` join
        the others."""
        given = config or Config.from_environment(config_path=config_path)
        url = database_url or given.database_url
        refuse_relative_paths(given, database_url=url)  # under Airflow: shared state only
        found, routes = _switched_on(given)
        policy = EscalationPolicy(routes=routes, escalate_after_runs=4)
        mutes: list[Mute] = []
        rows: tuple[Path | None, str | None] = (None, None)
        if given.config_path.exists():
            alerting = config_from_document(
                given.document, known_receivers=[*found, *(receivers or {})]
            )
            found.update(alerting.receivers)
            policy = alerting.policies.get("default", policy)
            mutes.extend(alerting.silences)
            rows = (alerting.failing_rows_directory, alerting.failing_rows_url)
        found.update(receivers or {})
        deadline_s, parallelism = _load_limits(given)
        problem: sa.exc.SQLAlchemyError | None = None
        try:
            engine = project_database(url)
        except sa.exc.SQLAlchemyError as exc:  # the run still evaluates, and spools
            if not unavailable(exc):
                raise
            engine, problem = sa.create_engine(_database_url(url)), exc
        settings = cls(
            engine=engine,
            receivers=found,
            source_deadline_s=deadline_s,
            load_parallelism=parallelism,
            metadata_answers=_switch(given.metadata_answers, METADATA_ANSWERS_ENV),
            default_policy=policy,
            mutes=mutes,
            failing_rows=failing_rows_log(given, *rows),
            delivery=RetryPolicy(budget_s=float(given.delivery_budget_s)),
            state_dir=given.state_path,
            spool_dir=given.state_path / "spool",
            config=given,
            serve_url=serve_url(given),
        )
        if problem is not None:
            database_unavailable(settings, problem)
        return settings


def failing_rows_log(
    config: Config, directory: Path | None = None, base_url: str | None = None
) -> FailingRowsLog:
    """Where failing rows go and how alerts link to them: DQ_FAILING_ROWS_DIR and
    DQ_FAILING_ROWS_URL, else dq.toml's [failing_rows] (given), else `$DQ_STATE_DIR/failing`
    and file links."""
    if config.failing_rows_dir:
        directory = Path(config.failing_rows_dir).resolve()
    if config.failing_rows_url:
        base_url = published_url(config.failing_rows_url, FAILING_ROWS_URL_ENV)
    return FailingRowsLog(directory or config.state_path / "failing", base_url=base_url)


def serve_url(config: Config) -> str | None:
    """DQ_SERVE_URL without its trailing slash; a value that is no http(s) URL is refused."""
    if not config.serve_url:
        return None
    return http_url(
        config.serve_url,
        f"{SERVE_URL_ENV} must be the http(s) URL where `dq serve` is reached, "
        "e.g. https://dq.example.com",
    )


def _switch(text: str | None, variable: str) -> bool:
    """An on/off setting (default on); a value that is neither names its variable."""
    if text is None:
        return True
    word = text.strip().lower()
    if word in ("1", "on", "true", "yes"):
        return True
    if word in ("0", "off", "false", "no"):
        return False
    raise ValueError(f"{variable} must be on or off (1/0), got {text!r}")


def _load_limits(config: Config) -> tuple[float, int]:
    """Source deadline and load parallelism from the environment; a bad value names its variable."""
    try:
        seconds = float(
            DEFAULT_DEADLINE_S if config.source_deadline_s is None else config.source_deadline_s
        )
    except ValueError:
        seconds = math.nan
    try:
        parallel = int(
            DEFAULT_PARALLELISM if config.load_parallelism is None else config.load_parallelism
        )
    except ValueError:
        parallel = 0
    if not (math.isfinite(seconds) and seconds > 0):
        raise ValueError(f"{SOURCE_DEADLINE_ENV} must be a positive number of seconds")
    if parallel < 1:
        raise ValueError(f"{LOAD_PARALLELISM_ENV} must be a whole number, at least 1")
    return seconds, parallel
