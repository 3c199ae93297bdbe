"""The fault catalogue of issue 11: each fault run with real processes, loopback Slack,
PagerDuty and SMTP servers and real databases, as the acceptance tests run it (the scenarios are
theirs, imported from tests/), printed as one table. It counts; it asserts nothing.

    python -m benchmarks.faults

Counting. An alert is one external effect a receiver should see: a Slack post (a root message,
or a reply in its thread), a Slack root edit (chat.update), an email, a PagerDuty event, a line
in the file receiver's alerts.jsonl. "alerts expected" counts those the scenario should
produce, by kind; "delivered" the distinct ones of each kind that arrived (up to the number
expected); "lost" = expected - delivered; "duplicated" every other arrival: a repeat of one
already delivered (an email with the same Message-ID, a PagerDuty event with the same dedup_key,
action and timestamp, a Slack post with the same notification and step, the same root edit
again), or one more than its kind expects (a second root for one incident). A repeat counts
even where the receiver absorbs it (PagerDuty's dedup_key, mail clients threading by
Message-ID). The wall time is the whole scenario's (every run in it), except where the notes
name one run.
"""

from __future__ import annotations

import sys
import time
import traceback
from collections.abc import Callable

from benchmarks.faults import delivery, runs
from benchmarks.faults.tally import Row, markdown

#: (fault, how to run it), in the order of the table.
CATALOGUE: list[tuple[str, Callable[[str], Row]]] = [
    (
        "1. two concurrent `dq run --due`, one due failing check, receivers slow (1 s), SQLite",
        lambda fault: runs.overlapping(fault, "sqlite"),
    ),
    ("2. the same on PostgreSQL", lambda fault: runs.overlapping(fault, "postgres")),
    (
        "3. SIGKILL after Slack accepted the root, then a new run",
        delivery.killed_after_the_root_post,
    ),
    (
        "4. SIGKILL after Slack accepted the thread reply (before chat.update), then a new run",
        lambda fault: delivery.killed_in_a_follow_up_step(
            fault, "chat.postMessage:after", "the new run found the reply by its metadata"
        ),
    ),
    (
        "4b. SIGKILL after Slack applied chat.update, then a new run",
        lambda fault: delivery.killed_in_a_follow_up_step(
            fault, "chat.update:after", "the edit in flight repeated, same content"
        ),
    ),
    (
        "5. SIGKILL during an email (DATA stored, 250 not yet sent), then a new run",
        lambda fault: delivery.killed_during(
            fault, "email", "the email in flight repeated, same Message-ID"
        ),
    ),
    (
        "6. SIGKILL during a PagerDuty call (event accepted, no answer), then a new run",
        lambda fault: delivery.killed_during(
            fault, "pagerduty", "the event in flight repeated, same dedup_key"
        ),
    ),
    (
        "7. two concurrent `dq deliver` over one outbox (PostgreSQL)",
        delivery.two_deliverers_on_postgres,
    ),
    (
        "8. a silence that ends after the check recovered",
        delivery.silence_ends_after_recovery,
    ),
    (
        "9. read-only project database (PostgreSQL), then writable again",
        runs.read_only_database,
    ),
    (
        "10. Slack 429 storm (Retry-After 120 s), 5 incidents",
        delivery.slack_429_storm_with_5_incidents,
    ),
    (
        "11. hanging, trickling and silent sources (HTTP, PostgreSQL, MariaDB) beside healthy ones",
        runs.slow_sources,
    ),
    (
        "12. broken check definitions among good checks (tests/checks/broken_checks)",
        runs.broken_checks,
    ),
]


def run() -> str:
    """Every fault of the catalogue, one after another; the table. A scenario that cannot run
    (a database server missing, say) gets a row saying so, and the others still run."""
    rows: list[Row | tuple[str, str]] = []
    started = time.perf_counter()
    for fault, scenario in CATALOGUE:
        try:
            rows.append(scenario(fault))
        except Exception as exc:  # a row of its own, and on to the next
            traceback.print_exc()
            rows.append((fault, f"{type(exc).__name__}: {str(exc)[:120]}"))
        print(
            f"faults: {fault[:40]}... done at {time.perf_counter() - started:.0f} s",
            file=sys.stderr,
        )
    return markdown(rows)
