"""What reached the receivers, counted against what should have: arrivals read off the Slack,
PagerDuty and SMTP stand-ins and the file receiver's alert lines, one table row per fault."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.alerting.servers import Mailbox, PagerDutyStandIn, SlackStandIn

#: (kind, identity): a second arrival with the same identity repeats one already delivered.
Arrival = tuple[str, str]


def arrivals(
    slack: SlackStandIn | None = None,
    pagerduty: PagerDutyStandIn | None = None,
    mailbox: Mailbox | None = None,
    alert_file: Path | None = None,
) -> list[Arrival]:
    """Every external effect the receivers saw, in kinds "slack root", "slack reply", "slack
    edit", "email", "pagerduty <action>" and "file <check>"."""
    found: list[Arrival] = []
    for message in slack.messages if slack else []:
        kind = "slack reply" if message.thread_ts else "slack root"
        found.append((kind, json.dumps(message.metadata, sort_keys=True)))  # notification, step
        found += [("slack edit", f"{message.ts} {edit.get('text')}") for edit in message.edits]
    for event in pagerduty.events if pagerduty else []:
        sent_at = (event.get("payload") or {}).get("timestamp")
        found.append((f"pagerduty {event['event_action']}", f"{event['dedup_key']} {sent_at}"))
    found += [("email", str(m["Message-ID"])) for m in (mailbox.messages if mailbox else [])]
    if alert_file is not None and alert_file.exists():
        for line in alert_file.read_text().splitlines():
            alert = json.loads(line)
            found.append((f"file {alert['outcome']['check']}", alert["dedup_key"]))
    return found


@dataclass(frozen=True)
class Row:
    fault: str
    expected: int
    delivered: int
    duplicated: int
    seconds: float
    notes: str = ""

    @property
    def lost(self) -> int:
        return self.expected - self.delivered


def tally(
    fault: str,
    expected: Mapping[str, int],
    arrived: Sequence[Arrival],
    seconds: float,
    notes: str = "",
) -> Row:
    """`expected` counts alerts by kind; distinct arrivals of a kind deliver up to that many,
    and every other arrival is a duplicate (a repeat, or one more than the kind expects)."""
    distinct: dict[str, set[str]] = defaultdict(set)
    for kind, identity in arrived:
        distinct[kind].add(identity)
    delivered = sum(min(count, len(distinct[kind])) for kind, count in expected.items())
    return Row(fault, sum(expected.values()), delivered, len(arrived) - delivered, seconds, notes)


def markdown(rows: Sequence[Row | tuple[str, str]]) -> str:
    """The table; a (fault, error) pair is a scenario that could not run."""
    lines = [
        "| fault | alerts expected | delivered | lost | duplicated | wall time (s) | notes |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        if isinstance(row, Row):
            cells = [row.expected, row.delivered, row.lost, row.duplicated, f"{row.seconds:.1f}"]
            lines.append(f"| {row.fault} | {' | '.join(map(str, cells))} | {row.notes} |")
        else:
            lines.append(f"| {row[0]} | - | - | - | - | - | did not run: {row[1]} |")
    return "\n".join(lines)
