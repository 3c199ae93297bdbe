"""The metrics repository at 100,000 rows: insert time, and the time of a query by source and
time range (served by the source + time index) against a full scan of the table.

    python -m benchmarks.repository [--url postgresql+psycopg://...]
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import tempfile
import time
from pathlib import Path

import sqlalchemy as sa

from checkers.metrics import Completeness, Mean, Metric, MetricsRepository, ResultKey, Size

SOURCES = 50
DAYS = 500  # 50 sources x 500 days x 4 metrics = 100,000 rows


def _timed(action, repeats: int = 5) -> float:  # type: ignore[no-untyped-def]
    timings = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        timings.append(time.perf_counter() - started)
    return statistics.median(timings)


def run(url: str | None = None) -> str:
    with tempfile.TemporaryDirectory() as directory:
        repository = MetricsRepository(url or f"sqlite:///{Path(directory) / 'metrics.db'}")
        t0 = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)
        metrics = [
            Metric(Size(), value=1000.0),
            Metric(Completeness("a"), value=0.99),
            Metric(Mean("b"), value=3.5),
            Metric(Completeness("c"), value=1.0),
        ]
        started = time.perf_counter()
        for source in range(SOURCES):
            for day in range(DAYS):
                repository.save(
                    ResultKey(t0 + dt.timedelta(days=day), {"team": "t"}),
                    metrics,
                    source_table=f"table_{source:02d}",
                )
        inserted = time.perf_counter() - started
        with repository.engine.connect() as connection:
            rows = connection.execute(sa.text("SELECT count(*) FROM dq_metrics")).scalar()
        after, before = t0 + dt.timedelta(days=400), t0 + dt.timedelta(days=430)
        found = repository.query(source_table="table_07", after=after, before=before)
        indexed = _timed(
            lambda: repository.query(source_table="table_07", after=after, before=before)
        )
        full = _timed(lambda: repository.query(tags={"team": "x"}))  # reads every row
        return (
            f"| rows | insert (s) | source + 31 days ({len(found)} rows) | full scan |\n"
            f"|---|---|---|---|\n"
            f"| {rows:,} | {inserted:.1f} | {indexed * 1000:.1f} ms | {full * 1000:.0f} ms |"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url")
    print(run(parser.parse_args().url))
