"""`dq run` as a team sees it: a real process over ten checks, not on a terminal, prints one line
per check and its closing tally (compared with a snapshot; set DQ_UPDATE_SNAPSHOTS=1 to rewrite
it after an intended change), while Spark's progress bars, JVM logs and stack traces go to
`$DQ_STATE_DIR/logs/spark.log`. `--json` prints one JSON document and nothing else."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from scheduling.cli import main
from scheduling.cli.exits import EXIT_ERROR, EXIT_OK
from tests.local_connect import local_connect_port
from tests.scheduling.cli_output_checks import write_data

REPO = Path(__file__).resolve().parents[2]
SNAPSHOT = Path(__file__).with_name("snapshots") / "dq_run.txt"
AT = "2026-11-22T06:00:00"
CHECKS = 10
NOISE = ("[Stage", "\tat org.", "Exception in thread", "java.lang.", "WARN ", "Traceback")
TIMES = re.compile(r"\b\d+\.\ds\b|\b\d+m\d\ds\b")


def project_env(root: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DQ_", "SLACK_", "PAGERDUTY_", "SPARK_CONNECT", "AIRFLOW_CTX_"))
    }
    return env | {
        "PYTHONPATH": str(REPO),
        "DQ_CHECKS": "tests.scheduling.cli_output_checks",
        "DQ_CLI_OUTPUT_DIR": str(root),
        "DQ_DATABASE_URL": f"sqlite:///{root / 'dq.db'}",
        "DQ_STATE_DIR": str(root / "state"),
        "DQ_CONFIG": str(root / "none.toml"),
    }


def normalised(text: str, root: Path) -> str:
    return TIMES.sub("<time>", text.replace(str(root), "<tmp>"))


def test_a_run_prints_one_line_per_check_and_spark_talks_to_its_log(tmp_path):
    write_data(tmp_path)
    run = subprocess.run(
        [sys.executable, "-m", "scheduling.cli", "run", "--due", "--at", AT],
        cwd=tmp_path,
        env=project_env(tmp_path),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == EXIT_ERROR, run.stdout + run.stderr
    for noise in NOISE:
        assert noise not in run.stdout + run.stderr, noise
    lines = run.stdout.splitlines()
    passes = [line for line in lines if line.startswith("engine pass: ")]
    # header, a line per check, the engine passes checks shared, the tally
    assert len(lines) == 1 + CHECKS + len(passes) + 1 and passes
    assert "\x1b[" not in run.stdout  # no colour, no progress display: not a terminal
    # stderr holds only the console receiver's alerts: one per source with failing or broken
    # checks (grouped by source by default: the three failing over flights.parquet are one)
    assert [line[:5] for line in run.stderr.splitlines()] == ["[DQ] "] * 3

    snapshot = normalised(run.stdout, tmp_path)
    if os.environ.get("DQ_UPDATE_SNAPSHOTS") == "1":
        SNAPSHOT.parent.mkdir(exist_ok=True)
        SNAPSHOT.write_text(snapshot)
    assert snapshot == SNAPSHOT.read_text()

    spark_log = (tmp_path / "state" / "logs" / "spark.log").read_text()
    assert f"pid {run_pid(spark_log)}: " in spark_log  # the run marked where its JVM began
    # the malformed CSV's failed task, logged by the JVM (its data withheld), landed here
    assert "ERROR Executor: Exception in task" in spark_log and "withheld" in spark_log


def run_pid(log: str) -> str:
    found = re.search(r"^--- \S+ pid (\d+): ", log, re.MULTILINE)
    assert found, log[:2000]
    return found.group(1)


def test_json_is_one_document_and_nothing_else_over_spark_connect(tmp_path):
    """A local Spark Connect server: its JVM's output goes to the log file too."""
    write_data(tmp_path)
    env = project_env(tmp_path) | {"DQ_SPARK_REMOTE": "local[2]"}
    command = [sys.executable, "-m", "scheduling.cli", "run", "--due", "--json", "--at", AT]
    with local_connect_port():  # not while the Connect pass's own local server runs
        run = subprocess.run(
            command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
        )
    assert run.returncode == EXIT_ERROR, run.stdout + run.stderr
    document = json.loads(run.stdout)  # the whole of stdout
    assert document["exit_code"] == EXIT_ERROR and document["at"] == "2026-11-22T06:00:00+00:00"
    by_check = {o["check"]: o for o in document["outcomes"]}
    assert len(by_check) == CHECKS
    dest = by_check["out_dest_present"]
    assert isinstance(dest.pop("seconds"), float)
    assert dest == {
        "check": "out_dest_present",
        "status": "failed",
        "level": "WARNING",
        "escalated_level": None,
        "level_reason": "WARNING: FixedLevel, any unaccepted failure (2 failing)",
        "failing": 2,
        "total": 16,
        "unexcused": 2,
        "failing_keys_distinct": None,
        "error": None,
        "rows_read": 16,
        "bytes_not_read": 0,  # its row predicate scanned the file
        "metric_sources": {},  # a row check names no metrics
    }
    assert [by_check[c]["level"] for c in ("out_departure_times", "out_distance_short")] == [
        "ERROR",
        "CRITICAL",
    ]
    assert by_check["out_distance_positive"]["status"] == "tolerated"
    broken = by_check["out_malformed_numbers"]
    assert broken["status"] == "error" and "MALFORMED_RECORD" in broken["error"]
    statuses = sorted(o["status"] for o in document["outcomes"])
    assert statuses == ["error"] + ["failed"] * 4 + ["passed"] * 4 + ["tolerated"]
    assert document["skipped"] == [] and document["pending_notifications"] == []
    assert document["spooled"] == [] and document["database_error"] is None
    assert document["drift"] == []
    for noise in NOISE:
        assert noise not in run.stderr, noise
    spark_log = (tmp_path / "state" / "logs" / "spark.log").read_text()
    assert "ERROR Executor: Exception in task" in spark_log


def test_json_of_a_tick_with_nothing_due(tmp_path, monkeypatch, capsys):
    for name, value in project_env(tmp_path).items():
        if name.startswith("DQ_"):
            monkeypatch.setenv(name, value)
    # hourly checks, and a quarter past: nothing fired since the tick before
    assert main(["run", "--due", "--json", "--at", "2026-11-22T06:30:00"]) == EXIT_OK
    document = json.loads(capsys.readouterr().out)
    assert (document["outcomes"], document["exit_code"]) == ([], EXIT_OK)
