"""Receivers: Slack, email, PagerDuty, console and file. Each is a pure payload builder plus a
thin client that reports whether a failure is retryable."""

from alerting.receivers.base import Delivery, Receiver, Thread
from alerting.receivers.console import ConsoleReceiver, FileReceiver
from alerting.receivers.email import EmailReceiver, build_email
from alerting.receivers.pagerduty import PagerDutyReceiver, pagerduty_event
from alerting.receivers.slack import SlackReceiver, slack_calls

__all__ = [
    "ConsoleReceiver",
    "Delivery",
    "EmailReceiver",
    "FileReceiver",
    "PagerDutyReceiver",
    "Receiver",
    "SlackReceiver",
    "Thread",
    "build_email",
    "pagerduty_event",
    "slack_calls",
]
