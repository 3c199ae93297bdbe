"""The live progress line of `dq run`: drawn on a terminal, erased when the run ends, never drawn
anywhere else."""

from __future__ import annotations

import io
import os

from scheduling.cli.progress import RunProgress


def drawn(*, enabled: bool) -> str:
    """What a RunProgress wrote to a real pseudo-terminal while told two stages."""
    master, replica = os.openpty()
    try:
        with open(replica, "w", encoding="utf-8") as tty:
            with RunProgress(enabled=enabled, stream=tty) as progress:
                progress("evaluating 3 checks")
                progress("recording 1/3: flights_have_times")
            tty.flush()
        # A pty hands its output over in pieces: read until nothing is left.
        os.set_blocking(master, False)
        chunks = []
        while True:
            try:
                chunk = os.read(master, 1 << 16)
            except (BlockingIOError, OSError):
                break
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks).decode()
    finally:
        os.close(master)


def test_the_line_is_drawn_on_a_terminal_then_erased(monkeypatch):
    monkeypatch.setenv("TERM", "xterm")
    shown = drawn(enabled=True)
    assert "evaluating 3 checks" in shown and "recording 1/3: flights_have_times" in shown
    assert shown.endswith("\x1b[2K")  # transient: erased, the results print in its place


def test_nothing_is_drawn_when_disabled_or_not_on_a_terminal(monkeypatch):
    monkeypatch.setenv("TERM", "xterm")
    assert drawn(enabled=False) == ""
    monkeypatch.setenv("TERM", "dumb")  # a terminal that cannot redraw a line
    assert drawn(enabled=True) == ""
    pipe = io.StringIO()
    with RunProgress(enabled=True, stream=pipe) as progress:
        progress("evaluating 3 checks")
    assert pipe.getvalue() == ""
