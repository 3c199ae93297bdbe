"""The fault catalogue of issues 11 (rows 1-12) and 28 (rows 13-19): each fault run with real
processes, loopback Slack, PagerDuty and SMTP servers and real databases, as the acceptance tests
run it (the scenarios are theirs, imported from tests/), printed as one table. It counts; it
asserts nothing.

    python -m benchmarks.faults [--only ROW ...]   # e.g. --only 13 15b: 13, 13b and 15b

Counting. An alert is one external effect a receiver should see: a Slack post (a root message,
or a reply in its thread), a Slack root edit (chat.update), an email, a PagerDuty event, a line
in the file receiver's alerts.jsonl, a line the console receiver prints. "alerts expected"
counts those the scenario should produce, by kind; "delivered" the distinct ones of each kind
that arrived (up to the number expected); "lost" = expected - delivered; "duplicated" every
other arrival: a repeat of one already delivered (an email with the same Message-ID, a
PagerDuty event with the same dedup_key, action and timestamp, a Slack post with the same
notification and step, the same root edit again, the same console line again), or one more
than its kind expects (a second root for one incident). A repeat counts even where the
receiver absorbs it (PagerDuty's dedup_key, mail clients threading by Message-ID). The wall
time is the whole scenario's (every run in it), except where the notes name one run.
"""

from __future__ import annotations

import sys
import time
import traceback
from collections.abc import Callable, Sequence

from benchmarks.faults import delivery, run_path, runs
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
    (
        "13. state directory on a full 1 MiB tmpfs under `dq run --due`, then `dq deliver` on a "
        "mended disk",
        lambda fault: run_path.broken_state_disk(fault, full=True),
    ),
    (
        "13b. the same, the tmpfs read-only",
        lambda fault: run_path.broken_state_disk(fault, full=False),
    ),
    (
        "14. corrupt SQLite `dq.db` (8 KiB of random bytes), then moved aside as `dq doctor` says",
        run_path.corrupt_sqlite_file,
    ),
    (
        "15. two `dq deliver` 300 s apart (`--at`) over 40 incidents, SQLite",
        lambda fault: run_path.deliverers_apart(fault, "sqlite"),
    ),
    ("15b. the same on PostgreSQL", lambda fault: run_path.deliverers_apart(fault, "postgres")),
    (
        "16. two installations (two databases) posting to one Slack channel, one post in doubt",
        run_path.two_installations,
    ),
    (
        "17. Slack token revoked, then fixed: the failed notifications sent by `dq outbox retry`",
        run_path.outbox_retry,
    ),
    ("18. file modes after `dq run` with umask 022", run_path.umask_022),
    (
        "19. `dq prune` on 120 days of daily runs (90-day retention), then the pending delivered",
        run_path.prune_120_days,
    ),
]


def row_id(fault: str) -> str:
    """ "4b" of "4b. SIGKILL after ..."."""
    return fault.split(".", 1)[0]


def selected(only: Sequence[str]) -> list[tuple[str, Callable[[str], Row]]]:
    """The rows named in `only` ("13" takes 13 and 13b; "13b" only 13b), all when empty."""
    if not only:
        return CATALOGUE
    return [
        (fault, scenario)
        for fault, scenario in CATALOGUE
        if row_id(fault) in only or row_id(fault).rstrip("abcdefgh") in only
    ]


def run(only: Sequence[str] = ()) -> str:
    """The faults of the catalogue (those of `only`, when given), one after another; the table.
    A scenario that cannot run (a database server missing, say) gets a row saying so, and the
    others still run."""
    rows: list[Row | tuple[str, str]] = []
    started = time.perf_counter()
    for fault, scenario in selected(only):
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
