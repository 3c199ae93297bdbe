"""Run settings from the environment and `dq.toml`: the project database, receivers and the
escalation policy each check gets. Embedded defaults: SQLite, console and file receivers;
Slack, email and PagerDuty join when their environment variables are set."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy.engine import Engine

from alerting import EscalationPolicy, FailingRowsLog, load_config
from alerting.mutes import Mute
from alerting.receivers import (
    ConsoleReceiver,
    EmailReceiver,
    FileReceiver,
    PagerDutyReceiver,
    Receiver,
    SlackReceiver,
)
from checkers.levels import AlertLevel
from checkers.storage import project_database

CONFIG_ENV = "DQ_CONFIG"
STATE_DIR_ENV = "DQ_STATE_DIR"


def state_dir() -> Path:
    return Path(os.environ.get(STATE_DIR_ENV, ".dq"))


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
    mutes: list[Mute] = field(default_factory=list)
    failing_rows: FailingRowsLog | None = None

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
        found, routes = _from_environment()
        path = Path(config_path or os.environ.get(CONFIG_ENV, "dq.toml"))
        policy = EscalationPolicy(routes=routes, escalate_after_runs=4)
        mutes: list[Mute] = []
        if path.exists():
            config = load_config(path)
            found.update(config.receivers)
            if "default" in config.policies:
                policy = config.policies["default"]
            mutes.extend(config.silences)
        found.update(receivers or {})
        return cls(
            engine=project_database(database_url),
            receivers=found,
            default_policy=policy,
            mutes=mutes,
            failing_rows=FailingRowsLog(state_dir() / "failing"),
        )
