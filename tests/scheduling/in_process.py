"""`dq ARGS` in the test process, for tests whose subject is not the process boundary: the
command sees only the given DQ_* variables and working directory, runs on the test session's
Spark (no JVM of its own), and its stdout, stderr and exit code come back as from a process.
What only a real process shows (the crash handler, Spark's output in its log file, signals) is
tested with real `dq` processes (test_crash, test_cli_output, test_outage's killed replay)."""

from __future__ import annotations

import contextlib
import io
import logging
import os
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path

from scheduling.cli import main


@contextlib.contextmanager
def _dq_environment(env: Mapping[str, str]) -> Iterator[None]:
    """os.environ with exactly `env`'s DQ_* variables, restored afterwards."""
    saved = {k: v for k, v in os.environ.items() if k.startswith("DQ_")}
    try:
        for name in saved:
            del os.environ[name]
        os.environ.update({k: v for k, v in env.items() if k.startswith("DQ_")})
        yield
    finally:
        for name in [k for k in os.environ if k.startswith("DQ_")]:
            del os.environ[name]
        os.environ.update(saved)


def dq(env: Mapping[str, str], *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run `dq ARGS` here. Log records of WARNING and above reach its stderr as bare messages,
    as Python's last-resort handler writes them in a `dq` process (the console receiver's)."""
    out, err = io.StringIO(), io.StringIO()
    handler = logging.StreamHandler(err)
    handler.setLevel(logging.WARNING)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        with (
            _dq_environment(env),
            contextlib.chdir(cwd),
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
        ):
            code = main(list(args))
    finally:
        root.removeHandler(handler)
    return subprocess.CompletedProcess(["dq", *args], code, out.getvalue(), err.getvalue())
