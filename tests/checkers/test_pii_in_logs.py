"""A real `dq run` over malformed CSV files holding an email address, and over a failed cast of a
masked column: the data reaches neither the task log (stdout and stderr: PySpark's loggers, our
console alert) nor Spark's log file (its log4j lines) nor the recorded outcome and
notifications, while each check is still a clear ERROR naming the malformed source."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PII = "alice.secret@example.com"
MASKED_PII = "carol.pii@example.com"

CHECKS = """
from __future__ import annotations

import os

from checkers import PredicateSingleDatasetChecker
from checkers.parsers import CsvParser
from checks import QualityCheck

DIR = os.environ["DQ_TEST_PII_DIR"]


class ContactsTyped(QualityCheck):
    description = "Contacts have ids."
    parser = CsvParser(f"{DIR}/typed.csv", schema="id int, email string, age int")

    def checker(self, df):
        return PredicateSingleDatasetChecker(df, "id IS NOT NULL")


class ContactsQuoted(QualityCheck):
    description = "Contacts have ids."
    parser = CsvParser(f"{DIR}/quoted.csv")

    def checker(self, df):
        return PredicateSingleDatasetChecker(df, "id IS NOT NULL")


class ContactsCast(QualityCheck):
    description = "Emails are numbers (a bug: the cast fails on the data)."
    masked_columns = ("email",)
    parser = CsvParser(f"{DIR}/good.csv", schema="id int, email string")

    def checker(self, df):
        return PredicateSingleDatasetChecker(df, "CAST(email AS INT) > 0")
"""


@pytest.fixture
def project(tmp_path) -> Path:
    package = tmp_path / "pii_checks"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "contacts.py").write_text(CHECKS)
    # a value that is not an int in a typed column, and an unbalanced quote
    (tmp_path / "typed.csv").write_text(f"id,email,age\n1,bob@example.com,30\n2,{PII},notanumber\n")
    (tmp_path / "quoted.csv").write_text(f'id,email,age\n1,bob@example.com,30\n2,"{PII},40\n')
    (tmp_path / "good.csv").write_text(f"id,email\n1,{MASKED_PII}\n")
    return tmp_path


def test_malformed_rows_and_masked_cast_values_stay_out_of_logs_and_records(project):
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DQ_", "SLACK_", "PAGERDUTY_", "SPARK_CONNECT"))
    }
    env.update(
        PYTHONPATH=f"{REPO}{os.pathsep}{project}",
        DQ_CHECKS="pii_checks",
        DQ_TEST_PII_DIR=str(project),
        DQ_DATABASE_URL=f"sqlite:///{project / 'dq.db'}",
        DQ_STATE_DIR=str(project / ".dq"),
        DQ_CONFIG=str(project / "no-dq.toml"),
    )
    names = ["contacts_typed", "contacts_quoted", "contacts_cast"]
    run = subprocess.run(
        [sys.executable, "-m", "scheduling.cli", "run", *names],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    spark_log = (project / ".dq" / "logs" / "spark.log").read_text()
    log = run.stdout + run.stderr + spark_log
    assert run.returncode == 3, log  # a check could not be evaluated
    with sqlite3.connect(project / "dq.db") as db:
        records = "\n".join(db.iterdump())
    alerts = (project / ".dq" / "alerts.jsonl").read_text()
    for secret in (PII, MASKED_PII, "notanumber"):
        assert secret not in log, f"{secret} in the task log"
        assert secret not in records, f"{secret} in the project database"
        assert secret not in alerts, f"{secret} in the alerts file"
    lines = {name: next(x for x in run.stdout.splitlines() if f" {name} " in x) for name in names}
    assert all(line.startswith("! could not run ") for line in lines.values())
    typed_csv, quoted_csv = project / "typed.csv", project / "quoted.csv"
    assert (
        f" contacts_typed   CSV {typed_csv} is malformed at {typed_csv}, line 3: "
        in lines["contacts_typed"]
    )
    assert "[MALFORMED_RECORD_IN_PARSING" in lines["contacts_typed"]
    assert "<record withheld>" in lines["contacts_typed"]
    assert (
        f" contacts_quoted  CSV {quoted_csv} is malformed at {quoted_csv}, line 3: "
        in lines["contacts_quoted"]
    )
    assert (
        "[MALFORMED_CSV_RECORD] Malformed CSV record: <record withheld>" in lines["contacts_quoted"]
    )
    assert "[CAST_INVALID_INPUT] The value *** of the type" in lines["contacts_cast"]
    # Spark still says a task failed, in its log file, without the exception text that quotes
    # the row
    assert "Exception in task" in spark_log and "withheld" in spark_log
    assert "Exception in task" not in run.stderr


def test_our_log4j_configuration_is_added_unless_one_is_given():
    from checkers.spark import LOG4J_CONFIG, driver_java_options

    assert LOG4J_CONFIG.is_file()
    ours = f"-Dlog4j2.configurationFile={LOG4J_CONFIG.as_uri()}"
    assert driver_java_options("") == ours
    assert driver_java_options("-Xss4m") == f"-Xss4m {ours}"
    theirs = "-Dlog4j2.configurationFile=file:///etc/spark/log4j2.properties"
    assert driver_java_options(theirs) == theirs
