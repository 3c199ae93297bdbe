"""The Airflow example's lake (`DQ_EXAMPLE_LAKE`, default a temporary directory), shared by the
producing DAG, the check and the consuming DAG, and how the producer lands flights there.
Standard library only (the DAGs import it at parse time)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

#: The producer's asset (data landed) and the check's guarded asset (data passed quality).
LANDED = "producer/flights"
PASSED = "lake/flights"


def flights_dir() -> Path:
    root = os.environ.get("DQ_EXAMPLE_LAKE") or str(Path(tempfile.gettempdir()) / "dq-lake")
    return Path(root) / "flights"


def land_flights(missing_destinations: int = 0, count: int = 20) -> Path:
    """Land `count` flights as CSV, the first `missing_destinations` of them without one. The
    previous `_SUCCESS` goes first: new data is not ready until its check passes it."""
    target = flights_dir()
    target.mkdir(parents=True, exist_ok=True)
    (target / "_SUCCESS").unlink(missing_ok=True)
    lines = [f"{n},JFK,{'' if n < missing_destinations else 'LAX'}\n" for n in range(count)]
    part = target / ".part-0.csv.tmp"  # hidden until renamed: a reader never sees half a file
    part.write_text("flight,origin,dest\n" + "".join(lines))
    os.replace(part, target / "part-0.csv")
    return target
