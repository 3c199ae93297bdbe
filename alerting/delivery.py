"""The delivery stage: receivers in parallel (one worker thread each), each claiming its outbox
rows with a lease, per (incident, receiver) thread in sequence order, and recording every external
step before the next one starts. A rate-limited or failing receiver is deferred to a later run
(Retry-After or backoff, persisted), never waited on; time per receiver per run is bounded."""

from __future__ import annotations

import datetime as dt
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TypeVar

from sqlalchemy.engine import Connection, Engine

from alerting import digest, outbox
from alerting import outbox_steps as steps
from alerting.backoff import ReceiverBackoff, backoff_wait, load_backoff, save_backoff
from alerting.outbox import Claimed
from alerting.receivers.base import Delivery, GatheringReceiver, Receiver
from checkers.project_db import database_clock

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """How delivery treats trouble. A receiver failing retryably is left alone for its
    Retry-After, else `backoff_s * 2**(failures-1)` (at most `max_backoff_s`); a wait up to
    `short_wait_s` is taken once within the run instead. `budget_s` bounds the time one receiver
    gets per run, so a run's delivery takes at most `budget_s` plus one request timeout.
    `lease_s` is how long a claimed row stays another deliverer's after its last step began."""

    backoff_s: float = 30.0
    max_backoff_s: float = 3600.0
    short_wait_s: float = 2.0
    budget_s: float = 60.0
    lease_s: float = 120.0


@dataclass
class DeliveryReport:
    sent: list[str] = field(default_factory=list)  # dedup keys
    pending: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


def deliver_pending(
    engine: Engine,
    receivers: Mapping[str, Receiver],
    now: dt.datetime,
    *,
    retry: RetryPolicy | None = None,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> DeliveryReport:
    """Deliver what is due, each receiver in its own thread; returns once every receiver is
    done, deferred or out of budget. `report.pending` lists what is left for a later run."""
    policy = retry or RetryPolicy()
    holder = f"{socket.gethostname()[:60]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
    names = outbox.pending_receivers(engine)
    outbox.fresh_statistics(engine)
    leases = database_clock(engine)  # one clock for leases, whatever `now` or ours say
    workers = [
        _ReceiverRun(engine, name, receivers.get(name), now, policy, holder, sleep, clock, leases)
        for name in names
    ]
    report = DeliveryReport()
    if _one_connection(engine):  # in turn
        results = [worker.run() for worker in workers]
    else:
        with ThreadPoolExecutor(max(1, len(workers)), thread_name_prefix="dq-deliver") as pool:
            results = list(pool.map(_ReceiverRun.run, workers))
    for result in results:
        report.sent += result.sent
        report.failed += result.failed
    report.pending = outbox.pending_keys(engine)
    return report


def _one_connection(engine: Engine) -> bool:
    """An in-memory database lives in one connection: its users take turns."""
    return engine.url.database in (None, "", ":memory:")


def _concurrency(receiver: Receiver | None) -> int:
    """How many sends a receiver takes at once (`concurrent_sends`, e.g. PagerDuty's events,
    which its dedup_key makes safe to repeat); 1 for the others."""
    return max(1, int(getattr(receiver, "concurrent_sends", 1)))


@dataclass
class _ReceiverRun:
    """One receiver's share of a delivery run. Rows are leased CLAIM_BATCH at a time, and each
    confirmed step is written in the transaction that begins the next (alerting.outbox_steps):
    about one commit per notification, with never more than one step begun and unconfirmed per
    send in flight (one, or the receiver's `concurrent_sends`)."""

    engine: Engine
    name: str
    receiver: Receiver | None
    now: dt.datetime
    policy: RetryPolicy
    holder: str
    sleep: Callable[[float], None]
    clock: Callable[[], float]
    leases: Callable[[], dt.datetime]
    report: DeliveryReport = field(default_factory=DeliveryReport)
    #: Outbox rows found claimable and not yet tried (alerting.outbox.claim_many)
    queue: outbox.Candidates = field(default_factory=outbox.Candidates)
    #: Rows this run leased and has not begun yet, most urgent first
    held: list[Claimed] = field(default_factory=list)
    #: Confirmed steps not yet written: they go with the next write
    unsaved: list[Callable[[Connection], object]] = field(default_factory=list)
    #: Deferred: no further row is begun in this run
    stopped: bool = False
    lock: threading.RLock = field(default_factory=threading.RLock)

    def run(self) -> DeliveryReport:
        try:
            self._run()
        except Exception:  # a database error in one receiver's share must not stop the others
            log.exception("delivery to %s stopped; its notifications stay pending", self.name)
        finally:
            self._settle()
            if isinstance(self.receiver, GatheringReceiver):
                self.receiver.end_delivery()
        return self.report

    def _run(self) -> None:
        self.started = self.clock()
        self.waited = False
        self.backoff = load_backoff(self.engine, self.name)
        if self.backoff.blocks(self.now):
            log.info("%s is backing off until %s", self.name, self.backoff.not_before)
            return
        self._digest()
        width = 1 if _one_connection(self.engine) else _concurrency(self.receiver)
        with ThreadPoolExecutor(width, thread_name_prefix=f"dq-{self.name[:20]}") as pool:
            while self._left() > 0 and not self.stopped:
                if not self.held:
                    self._write()  # the last confirmed step, before looking again
                    self.held = outbox.claim_many(
                        self.engine,
                        self.name,
                        holder=self.holder,
                        now=self._current(),
                        lease=self._lease,
                        lease_now=self.leases(),
                        queue=self.queue,
                        at_least=width,
                    )
                if not self.held:
                    return
                batch, self.held = self.held, []
                if width == 1:
                    for claimed in batch:
                        self._take(claimed)
                else:  # concurrent sends, each row's steps still recorded in order
                    list(pool.map(self._take, batch))

    def _take(self, claimed: Claimed) -> None:
        """Deliver `claimed` unless the run is over (deferred, out of budget): then it goes
        back to the rows to release."""
        with self.lock:
            if self.stopped or self._left() <= 0:
                self.held.append(claimed)
                return
        result = self._deliver(claimed)
        with self.lock:
            if result in ("sent", "failed"):
                getattr(self.report, result).append(claimed.dedup_key)
            elif result == "deferred":
                self.stopped = True

    def _write(self, action: Callable[[Connection], T] | None = None) -> T | None:
        """One transaction: the confirmed steps not yet written, then `action`."""
        with self.lock:  # concurrent sends write in turn
            if action is None and not self.unsaved:
                return None
            with self.engine.begin() as connection:
                for unsaved in self.unsaved:
                    unsaved(connection)
                found = None if action is None else action(connection)
            self.unsaved.clear()
            return found

    def _confirmed(self, step: Callable[[Connection], object]) -> None:
        """A step the receiver confirmed: written with the next write."""
        with self.lock:
            self.unsaved.append(step)

    def _settle(self) -> None:
        """At the end of the run: write what is confirmed, and free the rows never begun."""
        held, self.held = self.held, []
        try:
            self._write(lambda c: steps.release(c, held, self.holder))
        except Exception:  # the database went away: the steps stay begun, looked up next run
            log.exception("could not record the last deliveries to %s", self.name)

    def _digest(self) -> None:
        """A backlog this receiver's rate limit cannot send in the run: a digest instead."""
        rate = getattr(self.receiver, "messages_per_second", None)
        limit = digest.capacity(rate, self.policy.budget_s)
        if limit is None:
            return
        folded = digest.fold_backlog(self.engine, self.name, limit, self.leases())
        if folded:
            log.warning(
                "%s: %d first notices folded into a digest (more than %d per run at %s/s)",
                self.name,
                folded,
                limit,
                rate,
            )

    @property
    def _lease(self) -> dt.timedelta:
        return dt.timedelta(seconds=self.policy.lease_s)

    def _left(self) -> float:
        return self.policy.budget_s - (self.clock() - self.started)

    def _current(self) -> dt.datetime:
        """The run's `now`, advanced by the time this worker has taken."""
        return self.now + dt.timedelta(seconds=self.clock() - self.started)

    def _deliver(self, claimed: Claimed) -> str:
        if self.receiver is None:
            error = f"no receiver named {self.name!r} is configured"
            log.error("notification %s not delivered: %s", claimed.dedup_key, error)
            self._write(lambda c: steps.fail(c, claimed, error))
            return "failed"
        step, thread = claimed.steps_done, dict(claimed.thread)
        in_flight, first = claimed.step_started == step, True
        while True:
            if self._left() <= 0:  # out of budget between steps: the rest resumes next run
                self._write(
                    partial(steps.defer, claimed=claimed, until=None, error=None, in_doubt=False)
                )
                return "pending"
            stored = self._write(
                partial(
                    steps.start_step,
                    claimed=claimed,
                    step=step,
                    holder=self.holder,
                    now=self._current(),
                    lease=self._lease,
                    lease_now=self.leases(),
                )
            )
            if stored is None:
                log.warning("lost the lease on %s to another deliverer", claimed.dedup_key)
                return "pending"
            if first:  # as stored now: another row of its group may have changed it meanwhile
                claimed, thread, first = replace(claimed, thread=stored), dict(stored), False
            delivery = self._send(claimed, thread, step, in_flight)
            if delivery.ok:
                step, thread = delivery.steps_done, {**thread, **delivery.thread}
                self._confirmed(
                    partial(
                        steps.finish_step,
                        claimed=claimed,
                        steps_done=step,
                        thread=thread,
                        sent=not delivery.more,
                        now=self._current(),
                        error=delivery.error,
                    )
                )
                claimed = replace(claimed, thread=thread)
                if not delivery.more:
                    self._recovered()
                    return "sent"
                in_flight = False
                continue
            if not delivery.retryable:
                self._write(partial(steps.fail, claimed=claimed, error=delivery.error or "failed"))
                log.error(
                    "notification %s failed permanently: %s", claimed.dedup_key, delivery.error
                )
                return "failed"
            in_flight = in_flight or delivery.in_doubt
            with self.lock:
                wait = self._failed(delivery)
                short = not self.waited and wait <= min(self.policy.short_wait_s, self._left())
                self.waited = self.waited or short  # a short Retry-After: one wait in the run
            if short:
                self.sleep(wait)
                continue
            self._defer(claimed, delivery, wait, in_flight)
            return "deferred"

    def _send(
        self, claimed: Claimed, thread: dict[str, object], step: int, in_flight: bool
    ) -> Delivery:
        assert self.receiver is not None
        try:
            return self.receiver.send(claimed.notification, thread, step, in_flight=in_flight)
        except Exception as exc:  # a receiver bug: keep the notification, say why
            return Delivery(
                ok=False,
                steps_done=step,
                retryable=True,
                in_doubt=True,
                error=f"{type(exc).__name__}: {exc}",
            )

    def _failed(self, delivery: Delivery) -> float:
        failures = self.backoff.consecutive_failures + 1
        self.backoff = replace(
            self.backoff, consecutive_failures=failures, last_error=delivery.error
        )
        return backoff_wait(
            failures,
            delivery.retry_after_s,
            base_s=self.policy.backoff_s,
            max_s=self.policy.max_backoff_s,
        )

    def _defer(self, claimed: Claimed, delivery: Delivery, wait: float, in_doubt: bool) -> None:
        current = self._current()
        until = current + dt.timedelta(seconds=wait)
        with self.lock:
            self.backoff = replace(self.backoff, not_before=until)
            save_backoff(self.engine, self.backoff, current)

        def deferred(connection: Connection) -> None:
            steps.defer(connection, claimed, until=until, error=delivery.error, in_doubt=in_doubt)
            steps.defer_receiver(connection, self.name, until)

        self._write(deferred)
        log.warning(
            "%s deferred for %.0f s after %d failure(s) in a row: %s",
            self.name,
            wait,
            self.backoff.consecutive_failures,
            delivery.error,
        )

    def _recovered(self) -> None:
        with self.lock:
            if self.backoff.consecutive_failures or self.backoff.not_before is not None:
                self.backoff = ReceiverBackoff(self.name)
                save_backoff(self.engine, self.backoff, self._current())
