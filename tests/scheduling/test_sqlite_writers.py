"""SQLite project databases serialize whole transactions (BEGIN IMMEDIATE): a run that reads and
then writes (loads the open incident, then updates it) cannot interleave with another one, and
the second writer waits for the lock instead of failing with "database is locked"."""

from __future__ import annotations

import contextlib
import threading

import sqlalchemy as sa

from scheduling.schema import project_database

COUNTER = sa.Table("counter", sa.MetaData(), sa.Column("n", sa.Integer, nullable=False))


def test_read_then_write_transactions_do_not_interleave(tmp_path):
    engine = project_database(f"sqlite:///{tmp_path / 'dq.db'}")
    with engine.begin() as connection:
        COUNTER.create(connection)
        connection.execute(COUNTER.insert().values(n=0))
    # Both writers read, meet, then write what they read plus one. Interleaved, both read 0 and
    # the count ends at 1. Serialized, the second cannot begin before the first commits: the
    # first stops waiting for it at the meeting point and the count ends at 2.
    meet = threading.Barrier(2, timeout=1.0)
    errors: list[BaseException] = []

    def writer() -> None:
        try:
            with engine.begin() as connection:
                seen = connection.execute(sa.select(COUNTER.c.n)).scalar_one()
                with contextlib.suppress(threading.BrokenBarrierError):
                    meet.wait()  # broken when the other writer waits for our lock
                connection.execute(COUNTER.update().values(n=seen + 1))
        except BaseException as exc:  # reported below, not lost in the thread
            errors.append(exc)

    threads = [threading.Thread(target=writer) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    with engine.connect() as connection:
        assert connection.execute(sa.select(COUNTER.c.n)).scalar_one() == 2
    engine.dispose()
