"""Readiness markers of guarded assets (`guards = Guarded(...)`, checks/assets.py). After a run's
outcome is recorded, a PASSED or TOLERATED run says "ready" and a FAILED or ERROR run takes it
back:
- the marker file beside the data (`_SUCCESS`, see `Guarded`) is written atomically (a hidden
  temporary file, then a rename) with the run as JSON: asset, check, window start and end, run
  id, status, counts, written_at; a FAILED or ERROR run removes it;
- the asset's row in `dq_readiness` (always, files or not) becomes ready or not ready.
Nothing is written before the outcome is recorded: a crash in between leaves no marker, which
is safe. A run whose outcome was spooled (database down) writes no marker; if red, it still
removes the file. A run of an older window than the asset's latest verdict changes nothing. A
marker that cannot be written or removed is logged and returned as `Readiness.error`; the
outcome stays recorded.

Airflow naming convention (the dq_checks DAG and consuming DAGs follow it):
- guarded asset `A` (`Guarded.asset`, default the check's name) is the Airflow asset
  `Asset(name=A, uri="dq://ready/A")`; the DAG emits an event for it only after a run whose
  `Readiness` is ready without error, with `Readiness.content` (the marker's JSON) as extra;
  consumers schedule on `Asset.ref(name=A)` or that same `Asset(...)`;
- an `after` entry `x` is `Asset.ref(uri=x)` when it contains `://`, else `Asset.ref(name=x)`;
- the manifest carries both per check: `"guards": {"name": A, "uri": "dq://ready/A"}` or null,
  `"after": [{"name": x} | {"uri": x}, ...]`."""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass, replace
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from alerting.tables import runs
from checkers.outcome import CheckOutcome, Status
from checkers.project_db import as_utc, utc_now
from checks.assets import Guarded
from scheduling.tick.markers import (
    marker_content,
    marker_path,
    read_marker,
    window_end,
    write_marker,
)
from scheduling.tick.readiness_table import readiness

log = logging.getLogger(__name__)
GREEN = (Status.PASSED, Status.TOLERATED)


@dataclass(frozen=True)
class Readiness:
    """What one run did to the readiness of the asset its check guards. `ready`: the asset is
    ready for `window_end` now; `marker`: the marker file (None: the database row only);
    `error`: what could not be written or removed (the Airflow task should fail and retry);
    `superseded`: a later window's verdict stands, nothing was changed; `content`: what the
    marker says (JSON-safe; the Airflow asset event's extra), when ready."""

    asset: str
    check: str
    ready: bool
    window_end: dt.datetime
    marker: str | None = None
    error: str | None = None
    superseded: bool = False
    content: dict[str, object] | None = None

    def describe(self) -> str:
        state = "ready" if self.ready else "not ready"
        where = f" (marker {self.marker})" if self.marker else ""
        text = f"{self.asset}: {state} for window ending {self.window_end.isoformat()}{where}"
        if self.superseded:
            text += ", unchanged: a later window's verdict stands"
        return f"{text}; {self.error}" if self.error else text


def _describe(exc: BaseException) -> str:
    original = getattr(exc, "orig", None) or exc
    lines = str(original).strip().splitlines()
    return f"{type(original).__name__}: {lines[0] if lines else ''}".rstrip(": ")


def _later_verdict(engine: Engine, asset: str, end: dt.datetime) -> bool | None:
    """Whether the asset's row says ready for a window later than `end` (None: no later one)."""
    with engine.connect() as connection:
        row = connection.execute(
            sa.select(readiness.c.ready, readiness.c.window_end).where(readiness.c.asset == asset)
        ).first()
    later = row is not None and as_utc(row.window_end) > end
    return bool(row.ready) if later and row is not None else None


def _run_id(
    engine: Engine, check: str, window: tuple[dt.datetime, dt.datetime] | None
) -> int | None:
    """The dq_runs row that recorded the run: the check's newest of the window (or unwindowed)."""
    same = runs.c.window_end == window[1] if window else runs.c.window_end.is_(None)
    with engine.connect() as connection:
        found = connection.execute(
            sa.select(sa.func.max(runs.c.id)).where(runs.c.check_name == check, same)
        )
        return found.scalar()


def _save_row(engine: Engine, values: dict[str, object], errors: list[str]) -> None:
    """The asset's row becomes `values`, unless a later window's verdict arrived meanwhile."""
    asset, end = values["asset"], values["window_end"]
    try:
        with engine.begin() as connection:
            known = connection.execute(
                sa.select(readiness.c.window_end)
                .where(readiness.c.asset == asset)
                .with_for_update()
            ).first()
            if known is None:
                connection.execute(readiness.insert().values(**values))
            elif not as_utc(known[0]) > end:  # type: ignore[operator]
                update = readiness.update().where(readiness.c.asset == asset)
                connection.execute(update.values(**values))
    except sa.exc.SQLAlchemyError as exc:
        errors.append(f"cannot write dq_readiness: {_describe(exc)}")


def _locate(check: type, guards: Guarded, now: dt.datetime, errors: list[str]) -> Path | None:
    try:
        return marker_path(check(now=now), guards)
    except Exception as exc:  # its parser() raised: the run's own outcome says why
        errors.append(f"cannot tell where its marker goes: {_describe(exc)}")
        return None


def _logged(found: Readiness) -> Readiness:
    if found.error:
        log.error("readiness marker: %s", found.describe())
    else:
        log.info("readiness marker: %s", found.describe())
    return found


def publish_readiness(
    engine: Engine | None,
    check: object,
    outcome: CheckOutcome,
    now: dt.datetime,
    *,
    window: tuple[dt.datetime, dt.datetime] | None,
) -> Readiness | None:
    """Mark the asset `check` guards ready (PASSED, TOLERATED) or not (FAILED, ERROR) for the
    run's window (unwindowed: ending `now`), once `outcome` is recorded in `engine`'s database.
    `engine` None: the outcome was spooled, and only a red run acts (it removes the file). None
    when `check` guards nothing. What cannot be written or removed is `Readiness.error`."""
    guards = getattr(check, "guards", None)
    green = outcome.status in GREEN
    if not isinstance(check, type) or not isinstance(guards, Guarded) or (green and not engine):
        return None
    start, end = window or (None, now)
    errors: list[str] = []
    marker = _locate(check, guards, now, errors)
    found = Readiness(
        guards.name_for(outcome.check), outcome.check, False, end, str(marker) if marker else None
    )
    run_id = None
    try:
        if engine is not None:
            later = _later_verdict(engine, found.asset, end)
            if later is not None:
                return _logged(replace(found, ready=later, superseded=True))
            run_id = _run_id(engine, outcome.check, window)
    except sa.exc.SQLAlchemyError as exc:
        errors.append(f"cannot read dq_readiness: {_describe(exc)}")
        engine = None
        if green:  # whether a later verdict stands is unknown: claim nothing
            return _logged(replace(found, error="; ".join(errors)))
    content = marker_content(found.asset, outcome, (start, end), run_id)
    if marker is not None:
        if (window_end(read_marker(marker)) or end) > end:
            return _logged(replace(found, ready=True, superseded=True))
        _put_marker(marker, content if green else None, errors)
    if engine is not None:
        _save_row(engine, _row(found, outcome, start, run_id, green and not errors, errors), errors)
    ready = green and not errors
    error = "; ".join(errors) or None
    return _logged(replace(found, ready=ready, error=error, content=content if ready else None))


def _put_marker(marker: Path, content: dict[str, object] | None, errors: list[str]) -> None:
    """Write the marker (`content`), or remove it (None)."""
    try:
        if content is not None:
            write_marker(marker, content)
        else:
            marker.unlink(missing_ok=True)
    except OSError as exc:
        verb = "write" if content is not None else "remove the earlier"
        errors.append(f"cannot {verb} marker {marker}: {_describe(exc)}")


def _row(
    found: Readiness,
    outcome: CheckOutcome,
    start: dt.datetime | None,
    run_id: int | None,
    ready: bool,
    errors: list[str],
) -> dict[str, object]:
    return {
        "asset": found.asset,
        "check_name": outcome.check,
        "ready": ready,
        "status": outcome.status.value,
        "window_start": start,
        "window_end": found.window_end,
        "run_id": run_id,
        "marker": found.marker,
        "error": "; ".join(errors) or None,
        "updated_at": utc_now(),
    }


def is_ready(engine: Engine, asset: str, *, at: dt.datetime | None = None) -> bool:
    """Whether `asset` passed quality for the window ending `at` (default: its latest verdict):
    its latest verdict is ready, covers `at`, and its marker file, if it has one, is there."""
    with engine.connect() as connection:
        row = connection.execute(sa.select(readiness).where(readiness.c.asset == asset)).first()
    if row is None or not row.ready:
        return False
    end = as_utc(row.window_end)
    if at is not None and end < as_utc(at):
        return False
    marker_end = window_end(read_marker(row.marker)) if row.marker else end
    return marker_end is not None and marker_end >= end
