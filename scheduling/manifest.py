"""The check manifest: names and clocks of the registered checks as JSON, shipped next to the DAG
so that parsing the DAG never imports Spark or the checks themselves."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from scheduling.clocks import Cron, Every

if TYPE_CHECKING:
    from checks.base import QualityCheck

MANIFEST = Path(__file__).resolve().parent.parent / "dags" / "dq_checks.json"


def clock_spec(clock: object) -> dict[str, object] | None:
    if isinstance(clock, Cron):
        return {"cron": clock.expression, "tz": clock.tz}
    if isinstance(clock, Every):
        return {"every_s": clock.interval.total_seconds(), "anchor": clock.anchor.isoformat()}
    return None


def clock_from_spec(spec: dict[str, object] | None) -> Cron | Every | None:
    import datetime as dt

    if spec is None:
        return None
    if "cron" in spec:
        return Cron(str(spec["cron"]), str(spec.get("tz", "UTC")))
    return Every(
        dt.timedelta(seconds=float(spec["every_s"])),  # type: ignore[arg-type]
        dt.datetime.fromisoformat(str(spec["anchor"])),
    )


def build_manifest(checks: Iterable[type[QualityCheck]]) -> dict[str, object]:
    entries = [
        {
            "name": c.name,
            "clock": clock_spec(c.clock),
            "owner": c.owner,
            "module": c.__module__,
            # Airflow assets (checks/readiness.py): emitted when green / also triggering the check
            "guards": None if c.guards is None else c.guards.airflow_asset(c.name),
            "after": [{"uri": a} if "://" in a else {"name": a} for a in c.after],
        }
        for c in sorted(checks, key=lambda c: c.name)
    ]
    return {"version": 1, "checks": entries}


def write_manifest(checks: Iterable[type[QualityCheck]], path: Path = MANIFEST) -> Path:
    path.write_text(json.dumps(build_manifest(checks), indent=2, sort_keys=True) + "\n")
    return path
