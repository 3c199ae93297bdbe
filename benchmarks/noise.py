"""Issue 26's before and after on the demo's December 2013 replay: notifications per receiver
with inhibition and grouping (the replay) and without them (the same outcomes recorded again with
both off, examples.noise), and which seeded problems reached a receiver either way.

    python -m benchmarks.noise                  # December 8-31, about 25 minutes on 2 cores
    python -m benchmarks.noise --off-replay     # also a second replay with both off, to compare
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import tempfile
from collections import Counter
from pathlib import Path

from benchmarks._harness import table
from examples.demo import FIRST_DAY, LAST_DAY, DemoResult, run_demo


def rows(counts: dict[str, Counter[str]]) -> list[list[object]]:
    names = sorted(set().union(*counts.values()))
    found = [[r, *(c[r] for c in counts.values())] for r in names]
    return [*found, ["all", *(sum(c.values()) for c in counts.values())]]


def replay(root: Path, *, noise_reduction: bool, days: tuple[dt.date, dt.date]) -> DemoResult:
    """One replay in its own directory (run_demo keeps a DQ_DATABASE_URL already set)."""
    os.environ["DQ_DATABASE_URL"] = f"sqlite:///{root / 'dq.db'}"
    os.environ["DQ_STATE_DIR"] = str(root / "state")
    first, last = days
    return run_demo(root, first_day=first, last_day=last, noise_reduction=noise_reduction)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--first-day", type=dt.date.fromisoformat, default=FIRST_DAY)
    parser.add_argument("--last-day", type=dt.date.fromisoformat, default=LAST_DAY)
    parser.add_argument("--off-replay", action="store_true")
    args = parser.parse_args(argv)
    days = (args.first_day, args.last_day)
    with tempfile.TemporaryDirectory() as scratch:
        on = replay(Path(scratch) / "on", noise_reduction=True, days=days)
        counts = {"with (sent)": on["notifications"]["sent"]}
        counts["without (recorded again)"] = on["notifications"]["without"]
        told = {"with": on["seeded"]}
        if args.off_replay:
            off = replay(Path(scratch) / "off", noise_reduction=False, days=days)
            counts["without (replayed)"] = off["notifications"]["sent"]
            told["without"] = off["seeded"]
    print(f"\nNotifications, {args.first_day} to {args.last_day}, inhibition and grouping:\n")
    print(table(["receiver", *counts], rows(counts)))
    print("\nSeeded problems that reached a receiver:\n")
    problems = list(on["seeded"])
    print(table(["problem", *told], [[p, *(t[p] for t in told.values())] for p in problems]))


if __name__ == "__main__":
    main()
