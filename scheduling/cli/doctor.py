"""`dq doctor`: whether this worker can run checks. One finding per concern, each OK or FAIL
with how to fix it: the worker's paths (under Airflow), the project database (reachable and
migrated, or how to recover a corrupt SQLite file), private files, the checks (they import),
Spark (it answers) and its executors (they run Python predicates: pandas, pyarrow and the
shipped check packages import there)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import sqlalchemy as sa

from checkers.private_files import looser_than_private
from checkers.project_db import database_url, schema_versions
from checkers.project_db.engine import timeouts as _timeouts
from checkers.shipping import DEPLOYMENT_DOC, explain_worker_error, ship_checks
from scheduling.airflow.worker_config import worker_problems
from scheduling.config import Config
from scheduling.outage import corrupt_sqlite, describe
from scheduling.schema import MIGRATIONS

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: A corrupt SQLite file: runs meanwhile spool their outcomes (operations §7).
_RECOVER = (
    "move the file aside with its FILE-wal and FILE-shm (keep them: `sqlite3 FILE .recover` may "
    "save its history) or restore a backup; the next run creates a fresh database and records "
    "the spooled outcomes"
)
#: Modules a Python predicate needs on the executors besides the check packages.
ARROW_MODULES = ("pandas", "pyarrow")


@dataclass(frozen=True)
class Finding:
    """One concern: `detail` says what was found; `fix`, when it failed, what to do."""

    name: str
    ok: bool
    detail: str
    fix: str = ""

    def line(self) -> str:
        text = f"{'OK  ' if self.ok else 'FAIL'} {self.name}: {self.detail}"
        return text if self.ok or not self.fix else f"{text}\n     fix: {self.fix}"


def worker_finding(config: Config) -> Finding:
    problems = worker_problems(config)
    if problems:
        return Finding("worker", False, "; ".join(problems), "set absolute, shared locations")
    return Finding("worker", True, "paths are absolute, or this is not an Airflow task")


def database_finding(url: str | None = None) -> Finding:
    """Reachable, and migrated to this dq-checkers' schema (never migrates: only looks)."""
    where = sa.engine.make_url(database_url(url))
    shown = where.render_as_string(hide_password=True)
    if where.get_backend_name() == "sqlite" and not Path(where.database or "").is_file():
        return Finding("database", False, f"{shown}: no such file", "check DQ_DATABASE_URL")
    engine = sa.create_engine(where, connect_args=_timeouts(where))
    try:
        with engine.connect() as connection:
            if not sa.inspect(connection).has_table(schema_versions.name):
                applied: set[int] = set()
            else:
                query = sa.select(schema_versions.c.version)
                applied = set(connection.execute(query).scalars())
    except sa.exc.SQLAlchemyError as exc:
        if corrupt_sqlite(exc):
            return Finding("database", False, f"corrupt: {describe(exc, where)}", _RECOVER)
        fix = "check DQ_DATABASE_URL, that the server runs and that this worker can reach it"
        return Finding("database", False, f"unreachable: {describe(exc, where)}", fix)
    finally:
        engine.dispose()
    known = {version for version, _ in MIGRATIONS}
    current = max(known)
    if applied - known:
        detail = f"{shown}: schema version {max(applied)}, newer than this dq-checkers ({current})"
        return Finding("database", False, detail, "upgrade dq-checkers on this worker")
    if known - applied:
        have = max(applied, default=0)
        detail = f"{shown}: schema version {have}, this dq-checkers needs {current}"
        fix = "any dq command that opens the database migrates it (e.g. `dq history`)"
        return Finding("database", False, detail, fix)
    return Finding("database", True, f"{shown}: schema version {current} (current)")


def files_finding(config: Config) -> Finding:
    """The state directory, its spool and failing rows, and a SQLite database hold row samples:
    readable by their owner alone."""
    url = sa.engine.make_url(database_url(config.database_url))
    state = config.state_path
    paths = [state, state / "spool", state / "failing", state / "spool" / "outcomes.jsonl"]
    if url.get_backend_name() == "sqlite" and url.database:  # and its WAL files, when present
        paths += [Path(f"{url.database}{end}") for end in ("", "-wal", "-shm")]
    loose = [f"{p} is {mode}" for p in paths if (mode := looser_than_private(p))]
    if loose:
        fix = "chmod 700 the folders and 600 the files (dq creates them so)"
        return Finding("files", False, "; ".join(loose), fix)
    return Finding("files", True, "state directory and database readable by their owner only")


def checks_finding(packages: Sequence[str]) -> Finding:
    from checks.registry import discover_all

    found = discover_all(packages)
    where = ", ".join(packages)
    if found.problems:
        first = found.problems[0].describe()
        detail = f"{len(found.problems)} problem(s) in {where}, first: {first}"
        return Finding("checks", False, detail, "`dq validate` lists them")
    return Finding("checks", True, f"{len(found.checks)} check(s) from {where}")


def manifest_finding(configured: str | None = None, dags_folder: str | None = None) -> Finding:
    """The check list of the DAG Airflow runs describes the deployed checks: DQ_MANIFEST, else
    dq_checks.json in Airflow's DAGs folder (AIRFLOW__CORE__DAGS_FOLDER) when there is one,
    else the repository's. A stale one still runs (the DAG alerts the platform's owner)."""
    from scheduling.airflow.manifest import (
        StaleManifest,
        deployed_manifest,
        load_manifest,
        manifest_drift,
    )

    path = deployed_manifest(configured, dags_folder)
    fix = f"dq manifest --out {path} at deploy"
    try:
        entries = load_manifest(path)
        drift = manifest_drift(path)
    except StaleManifest as exc:
        return Finding("manifest", False, str(exc), fix)
    if drift is not None:
        return Finding("manifest", False, drift, fix)
    return Finding("manifest", True, f"{path}: {len(entries)} checks, current", "")


def _failure(exc: Exception) -> str:
    from checkers.errors import describe_failure

    return describe_failure(exc)


def spark_finding(spark: SparkSession) -> Finding:
    try:
        answered = spark.range(3).count()
    except Exception as exc:
        fix = "check DQ_SPARK_REMOTE / DQ_SPARK_MASTER and that the server or master runs"
        return Finding("spark", False, _failure(exc), fix)
    return Finding("spark", answered == 3, f"Spark {spark.version} answers")


def _probe(packages: Sequence[str]) -> Callable[[object], str]:
    """A UDF body importing the Arrow modules and every module of `packages` on an executor;
    self-contained, so its pickle needs nothing from this module there."""

    def probe(_):  # no type hints: PySpark would pick the UDF kind from them
        import importlib
        import pkgutil
        import sys

        problems = []

        def load(name: str) -> object:
            try:
                return importlib.import_module(name)
            except (Exception, SystemExit) as exc:  # as discovery does: a module's own raise
                text = " ".join(str(exc).split())  # one line per problem
                problems.append(f"{name}: {type(exc).__name__}: {text}")
                return None

        for name in ARROW_MODULES:
            load(name)
        for name in packages:  # every module, as discovery imports them
            path = getattr(load(name), "__path__", [])
            for info in pkgutil.walk_packages(path, f"{name}.", onerror=lambda _: None):
                load(info.name)
        version = f"Python {sys.version_info[0]}.{sys.version_info[1]}"
        return "\n".join([version, *problems])

    return probe


def executors_finding(
    spark: SparkSession, packages: Sequence[str], broken_here: Collection[str] = ()
) -> Finding:
    """Ships the check packages as a run would, then imports them in a Python UDF. A module
    that fails to import here too (`broken_here`) is the checks finding's, not the executors'."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType

    fix = f"see {DEPLOYMENT_DOC}: the executors' Python needs the same version as this one"
    try:
        ship_checks(spark, packages)
        probe = F.udf(_probe(packages), StringType())
        answer = str(spark.range(1).select(probe(F.lit(0))).first()[0])  # type: ignore[index]
    except Exception as exc:
        return Finding("executors", False, _failure(exc), fix)
    version, *problems = answer.splitlines()
    problems = [p for p in problems if p.split(":", 1)[0] not in broken_here]
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        detail = f"{version}: {explain_worker_error(problems[0])}{more}"
        return Finding("executors", False, detail, fix)
    detail = f"{version} runs Python predicates and imports {', '.join(packages)}"
    if broken_here:
        detail += f" (not {', '.join(sorted(broken_here))}, which fail here too: see checks)"
    return Finding("executors", True, detail)


def doctor(config: Config, *, spark: SparkSession | None = None) -> list[Finding]:
    """Every finding of `config`, on `spark` or the configured target; Spark's only when the
    session can be had, the executors' only when Spark answers."""
    found = config.check_packages()
    found.make_importable()
    packages = list(found.names)
    findings = [
        worker_finding(config),
        database_finding(config.database_url),
        files_finding(config),
        checks_finding(packages),
        manifest_finding(config.manifest, config.airflow_dags_folder),
    ]
    try:
        session = spark or _session()
    except Exception as exc:
        fix = "check DQ_SPARK_REMOTE / DQ_SPARK_MASTER and the Spark installation"
        return [*findings, Finding("spark", False, _failure(exc), fix)]
    findings.append(spark_finding(session))
    if findings[-1].ok:
        findings.append(executors_finding(session, packages, _broken_modules(packages)))
    return findings


def _broken_modules(packages: Sequence[str]) -> set[str]:
    """Modules of `packages` with a definition problem on this machine (a plain import of them,
    as the executors' probe does, raises it)."""
    from checks.registry import discover_all

    return {p.module for p in discover_all(packages).problems if p.module}


def _session() -> SparkSession:
    from checkers.spark import spark_session

    return spark_session(app_name="dq-doctor")  # the configured target (or the running session)
