"""The one reader of the process's configuration: every `DQ_*` variable (and the few others dq
reads: SLACK_BOT_TOKEN, PAGERDUTY_ROUTING_KEY, Airflow's task marker; `dq serve` reads
SLACK_SIGNING_SECRET itself, as receivers read their secrets) and `dq.toml`, read once into a
`Config` that the rest of dq takes as a value. `DagConfig` is what the DAG file reads when
Airflow parses it, in its own process, before any run. Nothing heavy is imported here."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from checkers.dq_toml import DqTomlError, read_document

if TYPE_CHECKING:
    from checkers.check_packages import CheckPackages
    from checks.task_states import TaskStates

DATABASE_ENV = "DQ_DATABASE_URL"
STATE_DIR_ENV = "DQ_STATE_DIR"
DEFAULT_STATE_DIR = ".dq"
CONFIG_ENV = "DQ_CONFIG"
DEFAULT_CONFIG = "dq.toml"
CHECKS_ENV = "DQ_CHECKS"
MANIFEST_ENV = "DQ_MANIFEST"
DELIVERY_BUDGET_ENV = "DQ_DELIVERY_BUDGET_S"  # seconds one receiver may take per run
SOURCE_DEADLINE_ENV = "DQ_SOURCE_DEADLINE_S"
LOAD_PARALLELISM_ENV = "DQ_LOAD_PARALLELISM"
#: "0" (or "off", "false"): every metric is scanned, none answered from file statistics
METADATA_ANSWERS_ENV = "DQ_METADATA_ANSWERS"
FAILING_ROWS_DIR_ENV = "DQ_FAILING_ROWS_DIR"
FAILING_ROWS_URL_ENV = "DQ_FAILING_ROWS_URL"
FAILS_AT_ENV = "DQ_TASK_FAILS_AT"
FAILS_ON_ERROR_ENV = "DQ_TASK_FAILS_ON_ERROR"
CLAIM_LEASE_ENV = "DQ_CLAIM_LEASE_SECONDS"
SERVE_ADDRESS_ENV = "DQ_SERVE_ADDRESS"  # host:port `dq serve` listens on
DEFAULT_SERVE_ADDRESS = "127.0.0.1:8787"
SERVE_URL_ENV = "DQ_SERVE_URL"  # where `dq serve` is reached: alerts link to its pages
SIGNING_SECRET_ENV = "SLACK_SIGNING_SECRET"
#: Set by Airflow's task runner (Task SDK) in the environment of every task it executes, and
#: inherited by the processes a task starts (`dq run` from a BashOperator).
AIRFLOW_TASK_ENV = "AIRFLOW_CTX_DAG_ID"
ERROR_RETRY_DELAY_ENV = "DQ_ERROR_RETRY_DELAY_S"
PLATFORM_OWNER_ENV = "DQ_PLATFORM_OWNER"


@dataclass(frozen=True)
class EmailSettings:
    """The email receiver the environment switches on (DQ_SMTP_HOST and DQ_EMAIL_TO)."""

    host: str
    port: str
    sender: str
    recipients: tuple[str, ...]
    #: The variables holding the SMTP login, when set (read by the receiver when it sends).
    username_env: str | None
    password_env: str | None


@dataclass(frozen=True)
class Config:
    """What this process was configured with, as read once by `from_environment`. Texts a
    command may not need (limits, task states) stay texts here and are checked where used, so a
    bad value fails the command that reads it, with the variable's name."""

    database_url: str | None = None
    #: DQ_STATE_DIR as given (None: unset); `state_path` is the directory in use.
    state_dir: str | None = None
    config_path: Path = Path(DEFAULT_CONFIG)
    #: dq.toml, parsed (empty when the file does not exist).
    document: Mapping[str, object] = field(default_factory=dict)
    checks: tuple[str, ...] = ()
    manifest: str | None = None
    #: AIRFLOW__CORE__DAGS_FOLDER: where a deployed DAG (and its manifest) lives.
    airflow_dags_folder: str | None = None
    under_airflow: bool = False
    slack_channel: str | None = None
    email: EmailSettings | None = None
    pagerduty: bool = False
    delivery_budget_s: str = "60"
    source_deadline_s: str | None = None
    load_parallelism: str | None = None
    metadata_answers: str | None = None
    failing_rows_dir: str | None = None
    failing_rows_url: str | None = None
    task_fails_at: str = "error"
    task_fails_on_error: str = "1"
    claim_lease_s: str | None = None
    #: DQ_ERROR_RETRY_DELAY_S: seconds before an Airflow tick evaluates an ERROR check again
    #: ("off": never; default scheduling.tick.retry.DEFAULT_RETRY_DELAY_S).
    error_retry_delay_s: str | None = None
    #: DQ_PLATFORM_OWNER: who is told when the deployed manifest drifts from the checks' code.
    platform_owner: str = "platform"
    serve_address: str = DEFAULT_SERVE_ADDRESS
    serve_url: str | None = None

    @property
    def state_path(self) -> Path:
        """The state directory: the spool, the alert log, failing rows, incremental states."""
        return Path(self.state_dir or DEFAULT_STATE_DIR)

    @classmethod
    def from_environment(
        cls, environ: Mapping[str, str] | None = None, *, config_path: str | Path | None = None
    ) -> Config:
        """Read the environment (default: this process's) and the dq.toml it names
        (`config_path` stands for DQ_CONFIG)."""
        env = os.environ if environ is None else environ
        path = Path(config_path or env.get(CONFIG_ENV) or DEFAULT_CONFIG)
        return cls(
            database_url=env.get(DATABASE_ENV) or None,
            state_dir=env.get(STATE_DIR_ENV) or None,
            config_path=path,
            document=read_document(path),
            checks=tuple(p.strip() for p in env.get(CHECKS_ENV, "").split(",") if p.strip()),
            manifest=env.get(MANIFEST_ENV) or None,
            airflow_dags_folder=env.get("AIRFLOW__CORE__DAGS_FOLDER") or None,
            under_airflow=bool(env.get(AIRFLOW_TASK_ENV)),
            slack_channel=(
                env["DQ_SLACK_CHANNEL"]
                if env.get("SLACK_BOT_TOKEN") and env.get("DQ_SLACK_CHANNEL")
                else None
            ),
            email=_email(env),
            pagerduty=bool(env.get("PAGERDUTY_ROUTING_KEY")),
            delivery_budget_s=env.get(DELIVERY_BUDGET_ENV, "60"),
            source_deadline_s=env.get(SOURCE_DEADLINE_ENV),
            load_parallelism=env.get(LOAD_PARALLELISM_ENV),
            metadata_answers=env.get(METADATA_ANSWERS_ENV) or None,
            failing_rows_dir=env.get(FAILING_ROWS_DIR_ENV) or None,
            failing_rows_url=env.get(FAILING_ROWS_URL_ENV) or None,
            task_fails_at=env.get(FAILS_AT_ENV, "error"),
            task_fails_on_error=env.get(FAILS_ON_ERROR_ENV, "1"),
            claim_lease_s=env.get(CLAIM_LEASE_ENV) or None,
            error_retry_delay_s=env.get(ERROR_RETRY_DELAY_ENV) or None,
            platform_owner=env.get(PLATFORM_OWNER_ENV) or "platform",
            serve_address=env.get(SERVE_ADDRESS_ENV) or DEFAULT_SERVE_ADDRESS,
            serve_url=env.get(SERVE_URL_ENV) or None,
        )

    def check_packages(self) -> CheckPackages:
        """The packages holding this project's checks: DQ_CHECKS, else dq.toml's `checks`."""
        from checkers.check_packages import packages_from

        return packages_from(self.checks, self.config_path, self.document)

    def validated(self) -> Config:
        """This configuration, once its dq.toml passed every check a run makes of it (keys,
        types, receivers, policies, silences); a refusal is a `DqTomlError` naming the file, the
        line and the key. Every `dq` command reads its configuration through this."""
        from alerting.config import config_from_document
        from scheduling.retention import retention_from_document

        self.check_packages()
        try:
            config_from_document(self.document, known_receivers=self.environment_receivers())
            retention_from_document(self.document)
        except DqTomlError as exc:
            raise exc.located(self.config_path) from None
        return self

    def environment_receivers(self) -> tuple[str, ...]:
        """The receivers every run has and those the environment switches on."""
        named = {"slack": self.slack_channel, "email": self.email, "pagerduty": self.pagerduty}
        return ("console", "file", *(name for name, on in named.items() if on))

    def serve_host_port(self) -> tuple[str, int]:
        """DQ_SERVE_ADDRESS as (host, port); `[::1]:8787` for IPv6."""
        host, sep, port = self.serve_address.rpartition(":")
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(
                f"{SERVE_ADDRESS_ENV} must be HOST:PORT (e.g. {DEFAULT_SERVE_ADDRESS}), "
                f"got {self.serve_address!r}"
            )
        return host.strip("[]"), int(port)

    def retry_after_s(self) -> float | None:
        """DQ_ERROR_RETRY_DELAY_S as seconds; None for "off"."""
        from scheduling.tick.retry import DEFAULT_RETRY_DELAY_S

        text = (self.error_retry_delay_s or str(DEFAULT_RETRY_DELAY_S)).strip().lower()
        if text == "off":
            return None
        try:
            seconds = float(text)
        except ValueError:
            seconds = -1.0
        if not 0 <= seconds <= 600:
            raise ValueError(
                f"{ERROR_RETRY_DELAY_ENV} must be seconds (0 to 600) or off, got {text!r}"
            )
        return seconds

    def task_states(self) -> TaskStates:
        """How outcomes map onto Airflow task states for checks that declare none."""
        from checks.task_states import TaskStates

        if self.task_fails_on_error not in ("0", "1"):
            raise ValueError(
                f"{FAILS_ON_ERROR_ENV} must be 1 or 0, got {self.task_fails_on_error!r}"
            )
        try:
            return TaskStates.parse(self.task_fails_at, self.task_fails_on_error == "1")
        except KeyError:
            raise ValueError(
                f"{FAILS_AT_ENV} must be warning, error, critical or never, "
                f"got {self.task_fails_at!r}"
            ) from None


def state_path(environ: Mapping[str, str] | None = None) -> Path:
    """DQ_STATE_DIR alone, for settings built in code without a `Config` (tests, notebooks)."""
    env = os.environ if environ is None else environ
    return Path(env.get(STATE_DIR_ENV) or DEFAULT_STATE_DIR)


def _email(env: Mapping[str, str]) -> EmailSettings | None:
    if not (env.get("DQ_SMTP_HOST") and env.get("DQ_EMAIL_TO")):
        return None
    return EmailSettings(
        host=env["DQ_SMTP_HOST"],
        port=env.get("DQ_SMTP_PORT", "587"),
        sender=env.get("DQ_EMAIL_FROM", "dq-checkers@localhost"),
        recipients=tuple(a.strip() for a in env["DQ_EMAIL_TO"].split(",")),
        username_env="DQ_SMTP_USER" if env.get("DQ_SMTP_USER") else None,
        password_env="DQ_SMTP_PASSWORD" if env.get("DQ_SMTP_PASSWORD") else None,
    )


@dataclass(frozen=True)
class DagConfig:
    """What the DAG file reads at parse time, in the DAG processor (no run, no Settings yet):
    where the manifest is, the replay range and the task retries."""

    manifest: Path
    start: dt.datetime
    end: dt.datetime | None
    catchup: bool
    retries: int
    retry_delay: dt.timedelta

    @classmethod
    def from_environment(
        cls, default_manifest: Path, environ: Mapping[str, str] | None = None
    ) -> DagConfig:
        env = os.environ if environ is None else environ
        return cls(
            manifest=Path(env.get(MANIFEST_ENV) or default_manifest),
            start=_moment(env.get("DQ_DAG_START")) or dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
            end=_moment(env.get("DQ_DAG_END")),
            catchup=env.get("DQ_DAG_CATCHUP", "0").lower() in ("1", "true"),
            retries=int(env.get("DQ_TASK_RETRIES", "1")),
            retry_delay=dt.timedelta(seconds=float(env.get("DQ_TASK_RETRY_DELAY_S", "120"))),
        )


def _moment(text: str | None) -> dt.datetime | None:
    if not text:
        return None
    moment = dt.datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


def os_user() -> str:
    """Who is at the terminal: `USER`, else the account's name (silences, triage, annotations)."""
    import getpass

    return os.environ.get("USER") or getpass.getuser()
