"""A real Airflow 3.3 deployment for tests: `airflow db migrate`, then `airflow api-server`
(which also serves the Execution API that LocalExecutor tasks call), `airflow scheduler` and
`airflow dag-processor`, each in its own process group, in a temporary AIRFLOW_HOME with a SQLite
metadata database. The API server listens on a free loopback port; the scheduler's log server
(`[logging] worker_log_server_port`, default 8793 on all interfaces) is not started
(`--skip-serve-logs`: task logs are read from files here) and its port is a free one anyway.

    with AirflowStand(dags_folder, env={"PYTHONPATH": root, "DQ_MANIFEST": ...}) as stand:
        stand.wait_for_dags("dq_checks")
        run = stand.wait_for_run("dq_checks")
        stand.task_instances("dq_checks", run.run_id)

What the stand reads back (runs, task instances, XComs, asset events, task logs) comes from the
metadata database and the log files directly: quicker than the CLI, and what the UI shows.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path
from types import TracebackType

from tests.dags.airflow_metadata import (
    TERMINAL,
    AssetEvent,
    DagRun,
    MetadataReader,
    TaskInstance,
)
from tests.dags.process_tree import stop_trees
from tests.polling import wait_for

AIRFLOW = Path(sys.executable).with_name("airflow")
GRACE_S = 15.0  # SIGTERM, then this long, then SIGKILL

__all__ = ["TERMINAL", "AirflowStand", "AssetEvent", "DagRun", "StandError", "TaskInstance"]


class StandError(RuntimeError):
    """The stand could not start, or one of its processes died."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def airflow_environment(
    home: Path, dags_folder: Path, *, api_port: int, log_port: int, parallelism: int
) -> dict[str, str]:
    """The AIRFLOW__* settings of a stand (shared/reference/wave2.md §1.5)."""
    return {
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__DAGS_FOLDER": str(dags_folder),
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home / 'airflow.db'}",
        "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__PARALLELISM": str(parallelism),
        "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "False",
        "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"http://127.0.0.1:{api_port}/execution/",
        "AIRFLOW__API__HOST": "127.0.0.1",
        "AIRFLOW__API__PORT": str(api_port),
        "AIRFLOW__API__BASE_URL": f"http://127.0.0.1:{api_port}",
        "AIRFLOW__API__WORKERS": "1",
        "AIRFLOW__API_AUTH__JWT_SECRET": secrets.token_hex(32),
        "AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT": str(log_port),
        # a file is parsed when first listed; no test edits a DAG file while its stand runs, so
        # re-parsing every file every few seconds only spent CPU (a core's 6% for the stand's life)
        "AIRFLOW__DAG_PROCESSOR__MIN_FILE_PROCESS_INTERVAL": "600",
        "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "5",
        "AIRFLOW__DAG_PROCESSOR__PARSING_PROCESSES": "1",
        "AIRFLOW__SCHEDULER__SCHEDULER_IDLE_SLEEP_TIME": "0.5",
        # a task's supervisor notices its process's exit at this interval, and only then reports
        # a failed task's state: Airflow's 5 s held a red `outcome` (and `tick`) up to 5 s
        # (docs/deployment.md, "An Airflow worker")
        "AIRFLOW__WORKERS__MIN_HEARTBEAT_INTERVAL": "1",
    }


class AirflowStand:
    """Airflow's three services on one temporary AIRFLOW_HOME. `env` (PYTHONPATH, DQ_*) reaches
    every process, tasks included; it wins over the stand's own settings, so a test can change
    any AIRFLOW__* key. `parallelism` is `[core] parallelism`: task slots of the LocalExecutor.
    `migrated`: `home`'s airflow.db is a copy of a migrated one, so no `airflow db migrate`."""

    def __init__(
        self,
        dags_folder: str | os.PathLike[str],
        home: str | os.PathLike[str],
        *,
        env: Mapping[str, str] | None = None,
        parallelism: int = 4,
        migrated: bool = False,
    ) -> None:
        self.home = Path(home)
        self.dags_folder = Path(dags_folder)
        self.api_port = free_port()
        inherited = {k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW")}
        self.env = {
            **inherited,
            **airflow_environment(
                self.home,
                self.dags_folder,
                api_port=self.api_port,
                log_port=free_port(),
                parallelism=parallelism,
            ),
            **(env or {}),
        }
        self.migrated = migrated  # the metadata database in `home` is a migrated copy
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        self.metadata = MetadataReader(self.env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"])
        self.started_s: float | None = None  # start-up time: migrate to scheduler heartbeat

    # -- life cycle ------------------------------------------------------------------------

    def __enter__(self) -> AirflowStand:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stop()

    def start(self, timeout: float = 180.0) -> AirflowStand:
        """Migrate the metadata database, start the services, and wait until the API server
        answers and the scheduler has a heartbeat; raises StandError with each log's tail."""
        began = time.monotonic()
        self.home.mkdir(parents=True, exist_ok=True)
        self.dags_folder.mkdir(parents=True, exist_ok=True)
        if not self.migrated:
            migrate = self.airflow("db", "migrate")
            if migrate.returncode != 0:
                output = migrate.stdout + migrate.stderr
                raise StandError(f"airflow db migrate failed:\n{_tail(output)}")
        try:
            # Tasks call the Execution API from their first moment: the API server comes first.
            self._spawn("api-server", "api-server")
            self.wait(self._api_answers, "the API server", timeout)
            self._spawn("scheduler", "scheduler", "--skip-serve-logs")
            self._spawn("dag-processor", "dag-processor")
            self.wait(self.metadata.scheduler_alive, "a scheduler heartbeat", timeout)
        except BaseException:
            self.stop()
            raise
        self.started_s = time.monotonic() - began
        return self

    def _spawn(self, name: str, *args: str) -> None:
        log = (self.home / f"{name}.log").open("wb")
        self.processes[name] = subprocess.Popen(
            [str(AIRFLOW), *args],
            env=self.env,
            cwd=self.home,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # its own process group (and session)
        )
        log.close()

    def stop(self) -> None:
        """SIGTERM every service with all it started (LocalExecutor workers, task processes,
        their Spark drivers), SIGKILL what is left after GRACE_S."""
        running = [p for p in self.processes.values() if p.poll() is None]
        stop_trees([p.pid for p in running], GRACE_S)
        for process in running:
            process.wait(timeout=GRACE_S)
        self.metadata.dispose()

    # -- waiting ---------------------------------------------------------------------------

    def check_alive(self) -> None:
        """Raise StandError (with every log's tail) when a service has exited."""
        dead = {n: p.returncode for n, p in self.processes.items() if p.poll() is not None}
        if dead:
            raise StandError(f"Airflow process(es) exited: {dead}\n{self.log_tails()}")

    def wait(self, condition: Callable[[], object], what: str, timeout: float) -> object:
        """`tests.polling.wait_for`, failing at once (with the logs) when a service died."""

        def checked() -> object:
            self.check_alive()
            return condition()

        try:
            return wait_for(checked, what, timeout)
        except AssertionError as timed_out:
            raise StandError(f"{timed_out}\n{self.log_tails()}") from None

    def wait_for_dags(self, *dag_ids: str, timeout: float = 120.0) -> None:
        """Until each DAG is parsed and serialised; an import error of the DAGs folder fails at
        once with its stack trace."""

        def parsed() -> bool:
            errors = self.metadata.import_errors()
            if errors:
                raise StandError(f"DAG import errors: {errors}")
            return set(dag_ids) <= self.metadata.serialized_dag_ids()

        self.wait(parsed, f"DAGs {dag_ids} to be parsed", timeout)

    def wait_for_run(
        self,
        dag_id: str,
        predicate: Callable[[DagRun], bool] = lambda run: True,
        timeout: float = 300.0,
    ) -> DagRun:
        """The first run of `dag_id` matching `predicate` once it is success or failed."""

        def finished() -> DagRun | None:
            matching = [r for r in self.metadata.dag_runs(dag_id) if predicate(r)]
            return next((r for r in matching if r.state in TERMINAL), None)

        found = self.wait(finished, f"a finished run of {dag_id}", timeout)
        assert isinstance(found, DagRun)
        return found

    # -- reading back ----------------------------------------------------------------------

    def dag_runs(self, dag_id: str) -> list[DagRun]:
        return self.metadata.dag_runs(dag_id)

    def task_instances(self, dag_id: str, run_id: str) -> dict[tuple[str, int], TaskInstance]:
        """(task_id, map_index) -> the task instance's last try; map_index -1 when unmapped."""
        return self.metadata.task_instances(dag_id, run_id)

    def task_tries(self, dag_id: str, run_id: str) -> list[TaskInstance]:
        """Every try of every task instance, ordered; earlier tries come from
        task_instance_history with the state the try ended in (a retried try: "failed")."""
        return self.metadata.task_tries(dag_id, run_id)

    def shown(
        self, dag_id: str, run_id: str, task_id: str = "outcome"
    ) -> dict[str, list[str | None]]:
        """A mapped task's instances by their name in the grid (the rendered map index): the
        states their tries ended in."""
        tries: dict[str, list[str | None]] = {}
        for attempt in self.task_tries(dag_id, run_id):
            if attempt.task_id == task_id and attempt.map_index >= 0:
                name = attempt.rendered_map_index or str(attempt.map_index)
                tries.setdefault(name, []).append(attempt.state)
        return tries

    def map_index(self, dag_id: str, run_id: str, shown: str, task_id: str = "outcome") -> int:
        """The map index of the instance of `task_id` the grid names `shown`."""
        [index] = [
            t.map_index
            for t in self.task_instances(dag_id, run_id).values()
            if t.task_id == task_id and t.rendered_map_index == shown
        ]
        return index

    def xcom(
        self,
        dag_id: str,
        run_id: str,
        task_id: str,
        *,
        key: str = "return_value",
        map_index: int = -1,
    ) -> object:
        """The XCom value as the task pushed it (JSON-decoded); KeyError when there is none."""
        return self.metadata.xcom(dag_id, run_id, task_id, key=key, map_index=map_index)

    def asset_events(self, *, name: str | None = None, uri: str | None = None) -> list[AssetEvent]:
        return self.metadata.asset_events(name=name, uri=uri)

    def task_log_path(
        self, dag_id: str, run_id: str, task_id: str, *, try_number: int = 1, map_index: int = -1
    ) -> Path:
        """The default `[logging] log_filename_template` under AIRFLOW_HOME/logs."""
        mapped = f"map_index={map_index}/" if map_index >= 0 else ""
        return (
            self.home
            / "logs"
            / f"dag_id={dag_id}"
            / f"run_id={run_id}"
            / f"task_id={task_id}"
            / f"{mapped}attempt={try_number}.log"
        )

    def task_log(
        self, dag_id: str, run_id: str, task_id: str, *, try_number: int = 1, map_index: int = -1
    ) -> str:
        """The task log's messages, one a line (the file holds one JSON event a line)."""
        path = self.task_log_path(
            dag_id, run_id, task_id, try_number=try_number, map_index=map_index
        )
        return log_messages(path.read_text())

    # -- the CLI and the processes' logs ----------------------------------------------------

    def airflow(self, *args: str, timeout: float = 120.0) -> subprocess.CompletedProcess[str]:
        """`airflow ARGS` with the stand's environment (e.g. `dags trigger`, `dags unpause`)."""
        return subprocess.run(
            [str(AIRFLOW), *args],
            env=self.env,
            cwd=self.home,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def log_tails(self, lines: int = 40) -> str:
        parts = []
        for name in self.processes:
            path = self.home / f"{name}.log"
            text = path.read_text(errors="replace") if path.exists() else ""
            parts.append(f"--- {name} (last {lines} lines) ---\n{_tail(text, lines)}")
        return "\n".join(parts)

    def _api_answers(self) -> bool:
        url = f"http://127.0.0.1:{self.api_port}/api/v2/monitor/health"
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                return bool(answer.status == 200)
        except OSError:
            return False


def log_messages(text: str) -> str:
    """Airflow 3 task logs are JSON lines: the message is under "event", an exception under
    "error_detail" (shown as `  Type: value` lines). Other lines stay as they are."""
    out = []
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        if not isinstance(record, dict):
            out.append(line)
            continue
        out.append(str(record.get("event", line)))
        for error in record.get("error_detail") or ():
            out.append(f"  {error.get('exc_type')}: {error.get('exc_value')}")
    return "\n".join(out)


def _tail(text: str, lines: int = 40) -> str:
    return "\n".join(text.splitlines()[-lines:])
