"""Faults of the run path at company scale (issue 28), as its acceptance tests run them: the state
directory on a full or read-only tmpfs, a corrupt SQLite file, two deliverers 300 s apart, two
installations in one Slack channel, `dq outbox retry` after a token is fixed, file modes under
umask 022, `dq prune` on 120 days. `dq` runs in this process (on one Spark session where it
evaluates checks) or as `dq deliver` processes, against the loopback stand-ins."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import sqlalchemy as sa

from alerting import deliver_pending
from alerting.receivers.console import FileReceiver
from alerting.tables import incident_events, incidents, runs
from benchmarks.faults.delivery import NEW, bench
from benchmarks.faults.tally import Arrival, Row, arrivals, tally
from checkers.engine_tables import partitions
from checkers.metrics.anomaly import OnlineNormal
from checkers.spark import spark_session
from scheduling.cli.doctor import database_finding
from tests.alerting.outbox_faults import (
    deliverers_300_s_apart,
    retried_once_the_token_is_fixed,
    two_incidents_told_everywhere,
    two_installations_in_one_channel,
)
from tests.scheduling import in_process
from tests.scheduling.outages import dq, outage_env, spooled
from tests.scheduling.pruning import NOW, days_of_history, metric_history, pending
from tests.scheduling.state_disk import (
    AT,
    broken_disk,
    database,
    mode,
    private_paths,
    recorded,
    runs_under_umask_022,
)

LATER = "2026-11-22T07:10:00"  # a run or `dq deliver` after the fault is mended
#: The failing check of tests/scheduling/cli_fixture_checks, told by the console and the file.
TOLD = {"console cli_positive": 1, "file cli_positive": 1}


def console(*outputs: str) -> list[Arrival]:
    """The console receiver's lines in `dq`'s outputs. An outage's copy of an outcome on stderr
    ("(not recorded, spooled)") is no notification: it is printed again when it is replayed."""
    return [
        (f"console {line.split(': ')[1]}", line)  # "[DQ] FAILED (level ERROR): CHECK: ..."
        for output in outputs
        for line in output.splitlines()
        if line.startswith("[DQ] ")
        and ": " in line
        and not line.endswith("(not recorded, spooled)")
    ]


@contextmanager
def project() -> Iterator[tuple[Path, dict[str, str], sa.URL, float]]:
    """A temporary folder, the environment of tests/scheduling's outage runs, its SQLite file
    and the time the scenario starts (after Spark's, which the runs share)."""
    spark_session()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        yield tmp, outage_env(tmp), database(tmp), time.perf_counter()


def broken_state_disk(fault: str, *, full: bool) -> Row:
    with project() as (tmp, env, url, started):
        with broken_disk(Path(env["DQ_STATE_DIR"]), full=full) as used:
            run = dq(env, url, "run", "--due", "--at", AT)
            found_runs, found_incidents, sent = recorded(url)
        mended = dq(env, url, "deliver", "--at", LATER)
        seconds = time.perf_counter() - started
        found = [
            *console(run.stdout, run.stderr),
            *arrivals(alert_file=tmp / "state" / "alerts.jsonl"),
        ]
        failed = [json.loads(o) for _, status, o in found_runs if status == "failed"]
        unlinked = sum(not outcome.get("failing_rows") for outcome in failed)
    notes = (
        f"{used}: exit {run.returncode}, {len(found_runs)}/2 outcomes recorded, "
        f"{unlinked}/{len(failed)} FAILED without its failing-rows link, "
        f"{len(found_incidents)} incident, "
        f"console told, the file receiver's notification (its file on that disk) "
        f"{dict(sent).get('file')}; `dq deliver` on a mended disk: exit {mended.returncode}, "
        f"{mended.stdout.strip()}"
    )
    return tally(fault, TOLD, found, seconds, notes)


def corrupt_sqlite_file(fault: str) -> Row:
    with project() as (tmp, env, url, started):
        path = Path(str(url.database))
        path.parent.mkdir(parents=True)
        path.write_bytes(os.urandom(8192))
        run = dq(env, url, "run", "--due", "--at", AT)
        held = len(spooled(env))
        codes = [dq(env, url, command).returncode for command in ("deliver", "history")]
        finding = database_finding(url.render_as_string())
        shutil.move(path, path.with_name("dq.db.corrupt"))  # as `dq doctor` says
        replay = dq(env, url, "run", "--due", "--at", LATER)
        seconds = time.perf_counter() - started
        found = [
            *console(run.stderr, replay.stdout, replay.stderr),
            *arrivals(alert_file=tmp / "state" / "alerts.jsonl"),
        ]
        kept = len(recorded(url)[0])
    notes = (
        f"exit {run.returncode}, {held} outcomes spooled and on stderr; `dq deliver`, "
        f"`dq history` exit {codes}; doctor: {finding.detail.split(':')[0]}, fix says move it "
        f"aside; moved aside, the next run: exit {replay.returncode}, {kept} spooled outcomes "
        "recorded and told"
    )
    return tally(fault, TOLD, found, seconds, notes)


def deliverers_apart(fault: str, kind: str) -> Row:
    with bench() as b:
        s = b.stand
        scenario = b.tmp / "scenario"
        scenario.mkdir()
        started = time.perf_counter()
        done, statuses = deliverers_300_s_apart(
            kind, scenario, s.http, s.smtp_port, s.cert, s.mailbox, s.pagerduty
        )
        seconds = time.perf_counter() - started
        found = arrivals(s.slack, s.pagerduty, s.mailbox)
    notes = (
        f"40 incidents; the live one held in an email and a PagerDuty call while the backfill "
        f"ran; exit codes (backfill, live) {[p.returncode for p in done]}; "
        f"outbox {sorted(statuses)}"
    )
    return tally(fault, {kind: 40 * n for kind, n in NEW.items()}, found, seconds, notes)


def two_installations(fault: str) -> Row:
    with bench() as b:
        s = b.stand
        started = time.perf_counter()
        with two_installations_in_one_channel(b.tmp, s.receivers):
            pass
        seconds = time.perf_counter() - started
        lookups = [m for m, _ in s.slack.calls].count("conversations.history")
        found = arrivals(s.slack, s.pagerduty, s.mailbox)
    notes = (
        f"staging's post in doubt: {lookups} lookup by metadata, production's message (same "
        "check, incident 1) not adopted; each installation's own root, email and event"
    )
    return tally(fault, {kind: 2 * n for kind, n in NEW.items()}, found, seconds, notes)


def outbox_retry(fault: str) -> Row:
    with bench() as b:
        s = b.stand
        scenario = b.tmp / "scenario"
        scenario.mkdir()
        started = time.perf_counter()
        with mock.patch.dict(os.environ, SSL_CERT_FILE=str(s.cert)):
            engine, env = two_incidents_told_everywhere(scenario, s.http, s.smtp_port)
            try:
                steps = list(retried_once_the_token_is_fixed(env))
                with engine.connect() as connection:
                    retries = connection.execute(
                        sa.select(sa.func.count()).select_from(incident_events)
                    ).scalar()
            finally:
                engine.dispose()
        seconds = time.perf_counter() - started
        found = arrivals(s.slack, s.pagerduty, s.mailbox)
    deliver, listed, retried, again, _ = steps
    notes = (
        f"2 incidents; `dq deliver` with the token revoked: exit {deliver.returncode}, "
        f"{len(listed.stdout.splitlines())} Slack failed (invalid_auth), email and PagerDuty "
        f"sent; fixed, `dq outbox retry --receiver slack`: exit {retried.returncode}, "
        f"{'; '.join(retried.stdout.strip().splitlines())}, {retries} retries in the "
        "incidents' logs; retried again: "
        f"{again.stdout.strip()}"
    )
    return tally(fault, {kind: 2 * n for kind, n in NEW.items()}, found, seconds, notes)


def umask_022(fault: str) -> Row:
    with project() as (tmp, env, url, started):
        done = runs_under_umask_022(env, url)
        first, wal, second = done.first, done.wal, done.second
        seconds = time.perf_counter() - started
        folders, files = private_paths(env, url)
        found = [
            *console(first.stdout, first.stderr, second.stdout, second.stderr),
            *arrivals(alert_file=tmp / "state" / "alerts.jsonl"),
        ]
        modes = (
            {f"{mode(p):04o}" for p in folders},
            {f"{mode(p):04o}" for p in files} | {f"{m:04o}" for m in wal.values()},
        )
    notes = (
        f"exit codes {first.returncode}, {second.returncode} (the second on a file that is not "
        f"a database: spooled); {len(folders)} folders {'/'.join(sorted(modes[0]))}, "
        f"{len(files) + len(wal)} files {'/'.join(sorted(modes[1]))} (failing rows, spool, "
        "alerts, dq.db and its WAL)"
    )
    return tally(fault, TOLD, found, seconds, notes)


def prune_120_days(fault: str) -> Row:
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        started = time.perf_counter()
        p = days_of_history(tmp)
        engine = p.engine
        before = len(pending(engine))
        history = metric_history(engine)
        judged = OnlineNormal().detect([*history, 180.0], start=len(history))
        built = time.perf_counter()
        done = in_process.dq(p.env, "prune", "--at", NOW.isoformat(), cwd=tmp)
        pruned = time.perf_counter() - built
        left = len(pending(engine))
        with engine.connect() as connection:
            kept = connection.execute(sa.select(sa.func.count()).select_from(runs)).scalar()
            still_open = connection.execute(
                sa.select(sa.func.count()).where(incidents.c.status == "open")
            ).scalar()
            stored = connection.execute(sa.select(sa.func.count()).select_from(partitions)).scalar()
        after = metric_history(engine)
        alike = OnlineNormal().detect([*after, 180.0], start=len(after)) == judged
        alerts = tmp / "pager.jsonl"  # the open incident's pending notifications, told after
        deliver_pending(engine, {"pager": FileReceiver("pager", alerts)}, NOW)
        engine.dispose()
        found = arrivals(alert_file=alerts)
    notes = (
        f"`dq prune` (90 days): exit {done.returncode}, {done.stdout.strip()} in {pruned:.2f} s; "
        f"kept {kept} runs, {still_open} open incident, {left}/{before} "
        f"pending notifications, {stored} incremental partition, {len(after)}/{len(history)} "
        f"metric history ({'judged alike' if alike else 'JUDGED OTHERWISE'}); the pending "
        "ones delivered after"
    )
    return tally(
        fault, {"file orders_customer": before}, found, time.perf_counter() - started, notes
    )
