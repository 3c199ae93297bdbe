"""A real process SIGKILLed inside one step of the run path:
`python -m tests.scheduling.stage_crasher STAGE URL`. It runs the step for real on the project
database at URL and kills itself right after the step's first statement that begins with
`KILL_AFTER[STAGE]`, while that statement's transaction is still open:
- `prune`: a tick (no checks) at `PRUNE_AT`, with DQ_STATE_DIR and DQ_CONFIG from the
  environment, killed in its prune_history stage, after the day's claim was taken and the old
  runs deleted, before that transaction commits (tests/scheduling/test_prune.py);
- `digest`: a delivery run to a Slack receiver allowed `DIGEST_LIMIT` posts a run, killed while
  it folds the backlog into a digest, after the digest's root was rewritten and before its
  members are marked (tests/alerting/test_digest.py)."""

from __future__ import annotations

import datetime as dt
import os
import signal
import sys

import sqlalchemy as sa

#: The statement each stage dies after.
KILL_AFTER = {
    "prune": "DELETE FROM dq_runs",
    "digest": "UPDATE dq_notifications SET level=?, payload=?",
}
PRUNE_AT = dt.datetime(2026, 7, 31, 6, 0, tzinfo=dt.UTC)
#: Slack at one post a second, for a run of this many seconds: at most this many posts.
DIGEST_LIMIT = 5


def slack_receiver(base_url: str):  # type: ignore[no-untyped-def]
    from alerting.receivers.slack import SlackReceiver

    return SlackReceiver("slack", "c0dq", base_url=base_url, messages_per_second=1.0)


def digest_retry():  # type: ignore[no-untyped-def]
    from alerting.delivery import RetryPolicy

    return RetryPolicy(budget_s=float(DIGEST_LIMIT))


def _kill_after(prefix: str) -> None:
    @sa.event.listens_for(sa.Engine, "after_cursor_execute")
    def _die(conn, cursor, statement, *_):  # type: ignore[no-untyped-def]
        if statement.startswith(prefix):
            os.kill(os.getpid(), signal.SIGKILL)


def _prune(url: str) -> None:
    from scheduling.settings import Settings
    from scheduling.tick.pipeline import TickRequest, run_tick

    run_tick(TickRequest(now=PRUNE_AT), Settings.from_environment(database_url=url))


def _digest(url: str) -> None:
    from alerting import deliver_pending
    from tests.alerting.conftest import T0

    engine = sa.create_engine(url)
    receivers = {"slack": slack_receiver("http://127.0.0.1:1/api/")}  # killed before any post
    deliver_pending(engine, receivers, T0, retry=digest_retry(), sleep=lambda s: None)


if __name__ == "__main__":
    stage, url = sys.argv[1:]
    _kill_after(KILL_AFTER[stage])
    {"prune": _prune, "digest": _digest}[stage](url)
    sys.exit(f"{stage} ran to its end: the statement {KILL_AFTER[stage]!r} never ran")
