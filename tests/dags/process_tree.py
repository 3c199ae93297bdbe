"""Stopping a service and everything it started: its process group, and descendants that moved
to groups of their own (Airflow's task processes call setpgid; a task's Spark JVM is their
child)."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Sequence

import psutil


def stop_trees(pids: Sequence[int], grace_s: float) -> None:
    """SIGTERM the process group of each of `pids` and every descendant; SIGKILL whatever is
    still alive after `grace_s` seconds, with whatever it started meanwhile."""
    victims = [process for pid in pids for process in _tree(pid)]
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGTERM)
    for victim in victims:
        _send(victim, signal.SIGTERM)
    _, alive = psutil.wait_procs(victims, timeout=grace_s)
    late = [process for survivor in alive for process in _tree(survivor.pid)]
    for victim in late:
        _send(victim, signal.SIGKILL)
    psutil.wait_procs(late, timeout=grace_s)


def _tree(pid: int) -> list[psutil.Process]:
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def _send(process: psutil.Process, sig: signal.Signals) -> None:
    with contextlib.suppress(psutil.NoSuchProcess):
        process.send_signal(sig)
