"""`dq` behind a start gate, so a test can start several runs at one moment:
`python -m tests.scheduling.gated_dq READY_FD GO_FD dq-arguments...`, both descriptors inherited
pipe ends (`subprocess.Popen(pass_fds=...)`). One byte on READY_FD says the imports are done; the
run starts when a byte arrives on GO_FD, and gives up when that pipe closes without one (the test
went away). Nothing polls: each side blocks on its pipe (tests/scheduling/overlapping.py)."""

from __future__ import annotations

import os
import sys

import scheduling.runner  # noqa: F401  (the slow imports, before the gate)
from scheduling.cli import main

if __name__ == "__main__":
    ready, go, *argv = sys.argv[1:]
    os.write(int(ready), b"r")
    os.close(int(ready))
    if os.read(int(go), 1) != b"g":
        sys.exit("the gate closed without opening")
    sys.exit(main(argv))
