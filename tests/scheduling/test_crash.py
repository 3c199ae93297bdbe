"""A bug in `dq` itself exits 70 with one line on stderr and the traceback in
`$DQ_STATE_DIR/logs/dq.log`, apart from the codes of check results; a configuration dq refuses
under Airflow is a usage error (2)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from scheduling.cli import main
from scheduling.cli.exits import EXIT_CRASH, EXIT_USAGE

REPO = Path(__file__).resolve().parents[2]
# SQLAlchemy cannot parse it, and nothing in dq expects that: an uncaught exception
UNPARSABLE = "not a database url"


def test_a_crash_is_one_line_and_a_logged_traceback(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DQ_", "AIRFLOW_CTX_"))}
    env |= {
        "PYTHONPATH": str(REPO),
        "DQ_DATABASE_URL": UNPARSABLE,
        "DQ_STATE_DIR": str(tmp_path / "state"),
        "DQ_CONFIG": str(tmp_path / "none.toml"),
    }
    run = subprocess.run(
        [sys.executable, "-m", "scheduling.cli", "history"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == EXIT_CRASH == 70
    log = tmp_path / "state" / "logs" / "dq.log"
    assert run.stderr.splitlines() == [
        "dq history crashed: ArgumentError: Could not parse SQLAlchemy URL from given URL "
        f"string; traceback in {log}"
    ]
    assert run.stdout == ""
    logged = log.read_text()
    assert "dq history crashed" in logged and "Traceback (most recent call last):" in logged
    assert "sqlalchemy.exc.ArgumentError" in logged


def test_where_logs_stay_on_the_console_the_traceback_does_too(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DQ_SPARK_LOG", "stderr")
    monkeypatch.setenv("DQ_DATABASE_URL", UNPARSABLE)
    monkeypatch.setenv("DQ_STATE_DIR", str(tmp_path / "state"))
    assert main(["history"]) == EXIT_CRASH
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):")
    assert err.splitlines()[-1].startswith("dq history crashed: ArgumentError: ")
    assert (tmp_path / "state" / "logs" / "dq.log").exists()


def test_a_refused_worker_configuration_is_a_usage_error(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("AIRFLOW_CTX_DAG_ID", "dq_checks")
    monkeypatch.setenv("DQ_DATABASE_URL", f"sqlite:///{tmp_path / 'dq.db'}")
    monkeypatch.setenv("DQ_STATE_DIR", "relative/state")
    assert main(["history"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.startswith("dq history: under Airflow: DQ_STATE_DIR is 'relative/state'")
