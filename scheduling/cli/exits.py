"""The exit codes of `dq`, one meaning each, and which one a run's results give."""

from __future__ import annotations

from collections.abc import Sequence

from checkers.outcome import CheckOutcome, Status

EXIT_OK = 0  # every check passed or was tolerated
EXIT_FAILED = 1  # a check FAILED
EXIT_USAGE = 2  # unknown command or check, bad option, a configuration dq refuses
EXIT_ERROR = 3  # a check could not run (ERROR outcome, a broken definition included)
EXIT_INFRA = 4  # the project database or the state disk was unavailable (outcomes kept)
EXIT_DRIFT = 5  # `dq run --full`: an incremental outcome differs from a recomputation
EXIT_CRASH = 70  # an uncaught exception in dq itself (sysexits' EX_SOFTWARE)
EXIT_INVALID = 1  # `dq validate`: a check definition has a problem

MEANINGS = {
    EXIT_OK: "all passed or tolerated",
    EXIT_FAILED: "a check failed",
    EXIT_USAGE: "usage error",
    EXIT_ERROR: "a check could not run",
    EXIT_INFRA: "the project database or the state disk was unavailable",
    EXIT_DRIFT: "stored states drifted",
    EXIT_CRASH: "dq crashed",
}


def exit_code(outcomes: Sequence[CheckOutcome]) -> int:
    """3 when a check could not run, else 1 when one failed, else 0."""
    statuses = {o.status for o in outcomes}
    if Status.ERROR in statuses:
        return EXIT_ERROR
    return EXIT_FAILED if Status.FAILED in statuses else EXIT_OK


def run_exit_code(
    outcomes: Sequence[CheckOutcome], *, infrastructure: bool = False, drifted: bool = False
) -> int:
    """A run's code: 4 (database) wins over 5 (drift), over 3, over 1."""
    if infrastructure:
        return EXIT_INFRA
    if drifted:
        return EXIT_DRIFT
    return exit_code(outcomes)
