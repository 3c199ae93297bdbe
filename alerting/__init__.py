"""Alerting: outcome -> alert -> incident -> effective level -> per-receiver decision -> mutes ->
durable outbox -> delivery with retries -> Slack, email, PagerDuty, console, file.
Never imports Spark."""

from alerting.config import AlertingConfig, load_config
from alerting.decisions import LastNotice, decide
from alerting.delivery import DeliveryReport, RetryPolicy, deliver_pending
from alerting.failing_rows import FailingRowsLog
from alerting.model import (
    Alert,
    Incident,
    IncidentChange,
    IncidentStatus,
    Notification,
    NotifyReason,
    fingerprint,
    update_incident,
)
from alerting.mutes import MaintenanceWindow, Silence
from alerting.pipeline import Recorded, handle_outcome, record_outcome
from alerting.policy import EscalationPolicy
from alerting.reconcile import reconcile_mutes
from alerting.silences import add_silence

__all__ = [
    "Alert",
    "AlertingConfig",
    "DeliveryReport",
    "EscalationPolicy",
    "FailingRowsLog",
    "Incident",
    "IncidentChange",
    "IncidentStatus",
    "LastNotice",
    "MaintenanceWindow",
    "Notification",
    "NotifyReason",
    "Recorded",
    "RetryPolicy",
    "Silence",
    "add_silence",
    "decide",
    "deliver_pending",
    "fingerprint",
    "handle_outcome",
    "load_config",
    "reconcile_mutes",
    "record_outcome",
    "update_incident",
]
