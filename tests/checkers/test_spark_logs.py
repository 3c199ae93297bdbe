"""Where Spark's own output goes: a log file by default, the console on request or under Airflow;
a process started while a session is built writes there for good, and ours gets stderr back."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from checkers.spark_logs import (
    CONNECT_PROGRESS_ENV,
    jvm_output_to,
    log_dir,
    quiet_connect_client,
    spark_log,
)


def test_the_log_file_by_default_under_airflow_too_the_console_on_request(tmp_path):
    state = str(tmp_path / "state")
    assert spark_log({"DQ_STATE_DIR": state}) == tmp_path / "state" / "logs" / "spark.log"
    assert spark_log({}) == Path(".dq").absolute() / "logs" / "spark.log"
    assert log_dir({"DQ_STATE_DIR": state}) == tmp_path / "state" / "logs"
    assert spark_log({"DQ_STATE_DIR": state, "DQ_SPARK_LOG": "stderr"}) is None
    # a task's stderr is logged at ERROR by Airflow: the JVM's output goes to the file there too
    under_airflow = {"DQ_STATE_DIR": state, "AIRFLOW_CTX_DAG_ID": "dq_checks"}
    assert spark_log(under_airflow) == tmp_path / "state" / "logs" / "spark.log"
    chosen = {"DQ_SPARK_LOG": str(tmp_path / "spark.txt"), "AIRFLOW_CTX_DAG_ID": "dq_checks"}
    assert spark_log(chosen) == tmp_path / "spark.txt"


def test_a_process_started_meanwhile_keeps_writing_to_the_log(tmp_path, capfd):
    log = tmp_path / "logs" / "spark.log"
    script = "import sys, time; print('launcher warning', file=sys.stderr, flush=True)"
    with jvm_output_to(log):
        child = subprocess.Popen([sys.executable, "-c", script])
    child.wait(timeout=60)
    print("ours again", file=sys.stderr)
    assert capfd.readouterr().err == "ours again\n"
    lines = log.read_text().splitlines()
    assert lines[0].startswith("--- ") and f" pid {os.getpid()}: " in lines[0]
    assert lines[1:] == ["launcher warning"]
    with jvm_output_to(None):  # the console: nothing redirected
        print("still ours", file=sys.stderr)
    assert capfd.readouterr().err == "still ours\n"


def test_the_connect_client_draws_no_progress_bar_beside_a_log_file(tmp_path, monkeypatch):
    monkeypatch.setenv(CONNECT_PROGRESS_ENV, "1")
    quiet_connect_client(None)  # logs on the console: as the user set it
    assert os.environ[CONNECT_PROGRESS_ENV] == "1"
    quiet_connect_client(tmp_path / "spark.log")
    from pyspark.sql.connect.shell import progress_bar_enabled

    assert not progress_bar_enabled()
