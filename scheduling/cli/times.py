"""Times on `dq`'s command line: ISO text, checked while arguments are parsed."""

from __future__ import annotations

import argparse
import datetime as dt


def iso_text(text: str) -> str:
    """An argument that must be an ISO time: a typo is a usage error (exit 2), not a crash."""
    try:
        dt.datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not an ISO time: {text!r} (e.g. 2013-12-11T07:00 or 2013-12-11T07:00+00:00)"
        ) from None
    return text


def parse_time(text: str | None) -> dt.datetime:
    from checkers.project_db import utc_now

    if text is None:
        return utc_now()
    moment = dt.datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)
