"""The check manifest: what the DAG needs about every check (name, task id, clock, owner, how its
task reports outcomes), as JSON beside the DAG, so parsing the DAG imports neither Spark nor the
checks. It carries a digest of every source file of the check packages: `evaluate` compares them
on the worker at run time (hashing files, importing nothing), and a manifest that no longer
matches the code is a dq alert to the platform's owner and a failed `manifest` task, never the
DAG's import error: the DAG keeps scheduling the manifest's checks, run with the workers' code."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scheduling.clocks import Cron, Every

if TYPE_CHECKING:
    from checks.base import QualityCheck
    from checks.problems import DefinitionProblem

VERSION = 2
DAGS_DIR = Path(__file__).resolve().parents[2] / "dags"
REGENERATE = "regenerate it at deploy time: dq manifest --out {path}"


def manifest_path(configured: str | None = None) -> Path:
    """The manifest `dq manifest` writes and `dq doctor` checks: the `configured` one
    (DQ_MANIFEST), else the one beside this repository's DAG. (The DAG reads DQ_MANIFEST, else
    dq_checks.json beside its own file, wherever it was copied.)"""
    return Path(configured or DAGS_DIR / "dq_checks.json")


def deployed_manifest(configured: str | None = None, dags_folder: str | None = None) -> Path:
    """The manifest the deployed DAG reads: `configured` (DQ_MANIFEST), else dq_checks.json
    beside the DAG in Airflow's DAGs folder (AIRFLOW__CORE__DAGS_FOLDER) when it is there, else
    the repository's."""
    if configured:
        return Path(configured)
    if dags_folder and (Path(dags_folder) / "dq_checks.json").exists():
        return Path(dags_folder) / "dq_checks.json"
    return manifest_path()


def clock_spec(clock: object) -> dict[str, object] | None:
    if isinstance(clock, Cron):
        return {"cron": clock.expression, "tz": clock.tz}
    if isinstance(clock, Every):
        return {"every_s": clock.interval.total_seconds(), "anchor": clock.anchor.isoformat()}
    return None


def clock_from_spec(spec: Mapping[str, object] | None) -> Cron | Every | None:
    import datetime as dt

    if spec is None:
        return None
    if "cron" in spec:
        return Cron(str(spec["cron"]), str(spec.get("tz", "UTC")))
    return Every(
        dt.timedelta(seconds=float(spec["every_s"])),  # type: ignore[arg-type]
        dt.datetime.fromisoformat(str(spec["anchor"])),
    )


def task_ids(names: Iterable[str]) -> dict[str, str]:
    """An Airflow task-group id per check name: letters, digits, _ and - only (a problem's name
    may read `module:teams.orders`); a collision gets a short digest of the name."""
    ids: dict[str, str] = {}
    taken: set[str] = set()
    for name in sorted(names):
        key = re.sub(r"[^A-Za-z0-9_-]", "_", name)[:200]
        if key in taken:
            key = f"{key[:190]}_{hashlib.sha256(name.encode()).hexdigest()[:8]}"
        ids[name] = key
        taken.add(key)
    return ids


def _files(package: str) -> dict[str, Path]:
    """The .py files of a package (recursively) or of a single module, keyed by their path
    inside it; found without importing the package itself."""
    spec = importlib.util.find_spec(package)
    if spec is None:
        raise StaleManifest(f"check package {package!r} is not importable here")
    roots = list(spec.submodule_search_locations or [])
    if not roots:
        return {Path(str(spec.origin)).name: Path(str(spec.origin))}
    return {
        f"{Path(root).name}/{path.relative_to(root).as_posix()}": path
        for root in roots
        for path in sorted(Path(root).rglob("*.py"))
        if "__pycache__" not in path.parts
    }


def source_digests(packages: Sequence[str]) -> dict[str, dict[str, str]]:
    """Per package, the SHA-256 of each source file."""
    return {
        package: {
            name: hashlib.sha256(path.read_bytes()).hexdigest()[:16]
            for name, path in _files(package).items()
        }
        for package in packages
    }


def _task_states_spec(check: object) -> dict[str, object] | None:
    states = getattr(check, "task_states", None)
    return states.spec() if states is not None else None


def build_manifest(
    checks: Iterable[type[QualityCheck]],
    problems: Iterable[DefinitionProblem] = (),
    *,
    packages: Sequence[str] | None = None,
) -> dict[str, object]:
    """The manifest of `checks` and of the `problems` found beside them (each runs every tick
    as its check's ERROR outcome, so the DAG shows it failing); `packages` are hashed."""
    found = sorted(checks, key=lambda c: c.name)
    broken = list(problems)
    ids = task_ids([c.name for c in found] + [p.name for p in broken])
    entries: list[dict[str, object]] = [
        {
            "name": c.name,
            "task_id": ids[c.name],
            "clock": clock_spec(c.clock),
            "owner": c.owner,
            "module": c.__module__,
            "task_states": _task_states_spec(c),
            # Airflow assets (scheduling/tick/readiness.py): emitted when green / also triggering
            "guards": None if c.guards is None else c.guards.airflow_asset(c.name),
            "after": [{"uri": a} if "://" in a else {"name": a} for a in c.after],
        }
        for c in found
    ]
    entries += [
        {
            "name": p.name,
            "task_id": ids[p.name],
            "clock": None,
            "owner": p.owner,
            "module": p.module,
            "problem": p.reason,
        }
        for p in broken
    ]
    chosen = list(packages) if packages is not None else sorted({c.__module__ for c in found})
    return {
        "version": VERSION,
        "packages": chosen,
        "sources": source_digests(chosen),
        "checks": sorted(entries, key=lambda e: str(e["name"])),
    }


def render(manifest: Mapping[str, object]) -> str:
    return json.dumps(manifest, indent=2, sort_keys=True) + "\n"


def write_manifest(manifest: Mapping[str, object], path: Path) -> Path:
    """Write atomically (the DAG processor may be reading the old one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = path.with_name(f".{path.name}.tmp")
    staging.write_text(render(manifest))
    staging.replace(path)
    return path


class StaleManifest(RuntimeError):
    """There is no manifest the DAG can read (missing, or written by another version)."""


@dataclass(frozen=True)
class Entry:
    """One check of the manifest, as the DAG uses it."""

    name: str
    task_id: str
    clock: dict[str, object] | None
    owner: str
    task_states: dict[str, object] | None = None
    problem: str | None = None
    #: The Airflow asset a green run publishes: {"name", "uri"} (scheduling/tick/readiness.py)
    guards: dict[str, str] | None = None
    #: Airflow assets whose events also run the check: {"name": ...} or {"uri": ...} each
    after: tuple[dict[str, str], ...] = ()


def asset_key(spec: Mapping[str, str]) -> str:
    """`name:<n>` or `uri:<u>`: an `after` entry (an upstream Airflow asset) as a key."""
    return f"name:{spec['name']}" if "name" in spec else f"uri:{spec['uri']}"


def _differences(recorded: Mapping[str, str], current: Mapping[str, str]) -> list[str]:
    added = sorted(set(current) - set(recorded))
    removed = sorted(set(recorded) - set(current))
    changed = sorted(k for k in set(current) & set(recorded) if current[k] != recorded[k])
    return (
        [f"new {f}" for f in added]
        + [f"removed {f}" for f in removed]
        + [f"changed {f}" for f in changed]
    )


def _read(where: Path) -> dict[str, object]:
    fix = REGENERATE.format(path=where)
    try:
        data: dict[str, object] = json.loads(where.read_text())
    except FileNotFoundError:
        raise StaleManifest(f"no check manifest at {where}: {fix}") from None
    if data.get("version") != VERSION:
        raise StaleManifest(f"{where} has manifest version {data.get('version')}: {fix}")
    return data


def manifest_drift(where: Path) -> str | None:
    """What changed in the check packages since the manifest at `where` was generated (source
    files added, removed or changed, one line with the fix), or None when it is current."""
    recorded: dict[str, dict[str, str]] = _read(where)["sources"]  # type: ignore[assignment]
    try:
        current = source_digests(list(recorded))
    except StaleManifest as gone:
        return f"{where} is out of date with the checks ({gone}): {REGENERATE.format(path=where)}"
    changes = [
        f"{package}: {change}"
        for package in recorded
        for change in _differences(recorded[package], current[package])
    ]
    if not changes:
        return None
    shown = "; ".join(changes[:5]) + (f"; and {len(changes) - 5} more" if changes[5:] else "")
    return f"{where} is out of date with the checks ({shown}): {REGENERATE.format(path=where)}"


def load_manifest(where: Path) -> list[Entry]:
    """The manifest's entries, current or not (`manifest_drift` says): one team's edit without
    a new manifest must not stop every team's checks. Raises StaleManifest when there is no
    manifest to read."""
    data: dict[str, Any] = _read(where)
    return [
        Entry(
            name=e["name"],
            task_id=e["task_id"],
            clock=e.get("clock"),
            owner=e.get("owner", ""),
            task_states=e.get("task_states"),
            problem=e.get("problem"),
            guards=e.get("guards"),
            after=tuple(e.get("after") or ()),
        )
        for e in data["checks"]
    ]
