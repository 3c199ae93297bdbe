"""The one port a local Spark Connect server can take (PySpark's client finds a local server on
15002 only): the Connect pass holds it for its whole session, and a classic-pass test that starts
`dq` over a local server holds it for that run, so `make test` can run the two passes at once."""

from __future__ import annotations

import fcntl
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LOCK = Path(tempfile.gettempdir()) / "dq-tests-local-spark-connect-15002.lock"


@contextmanager
def local_connect_port() -> Iterator[None]:
    """Wait until no other test process holds port 15002 for a local server, and hold it."""
    with LOCK.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # blocks; released when the file closes
        yield
