"""`dq` behind a start gate, so a test can start several runs at one moment:
`python -m tests.scheduling.gated_dq READY_FILE GO_FILE dq-arguments...`. The imports are done
before READY_FILE appears; the run starts when GO_FILE does."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import scheduling.runner  # noqa: F401  (the slow imports, before the gate)
from scheduling.cli import main

if __name__ == "__main__":
    ready, go, *argv = sys.argv[1:]
    Path(ready).touch()
    deadline = time.monotonic() + 120
    while not Path(go).exists():
        if time.monotonic() > deadline:
            sys.exit("the gate never opened")
        time.sleep(0.005)
    sys.exit(main(argv))
