"""A run that claims one window and never finishes (until killed): `python -m
tests.scheduling.claim_holder URL LEASE_SECONDS`. It writes a line on stdout once the window is
held; its heartbeat renews the lease."""

from __future__ import annotations

import datetime as dt
import sys

from scheduling.claims import hold_windows
from scheduling.schema import project_database
from tests.scheduling.test_claims import END, START

if __name__ == "__main__":
    url, lease = sys.argv[1], float(sys.argv[2])
    held = hold_windows(
        project_database(url), [("orders", START, END)], lease=dt.timedelta(seconds=lease)
    )
    assert held.held, held.skipped
    with held:
        print("held", flush=True)
        sys.stdin.read()  # blocks until the test kills this process
