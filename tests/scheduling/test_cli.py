"""The `dq` command line, in-process on the test Spark session and a real SQLite database."""

from __future__ import annotations

import re

import pytest

from scheduling.cli import main
from scheduling.cli.exits import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from tests.metrics.jobs import count_jobs


@pytest.fixture
def cli_env(tmp_path, monkeypatch):
    csv = tmp_path / "numbers.csv"
    csv.write_text("n,label\n1,a\n2,b\n3,c\n")
    monkeypatch.setenv("DQ_CLI_CSV", str(csv))
    monkeypatch.setenv("DQ_CHECKS", "tests.scheduling.cli_fixture_checks")
    monkeypatch.setenv("DQ_DATABASE_URL", f"sqlite:///{tmp_path / 'dq.db'}")
    monkeypatch.setenv("DQ_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("DQ_CONFIG", str(tmp_path / "none.toml"))
    return csv


@pytest.mark.classic_only  # counts jobs through the SparkContext
def test_run_due_reads_a_shared_source_once(spark, cli_env, capsys):
    code, jobs = count_jobs(spark, lambda: main(["run", "--due", "--at", "2026-11-22T07:00:00"]))
    assert code == EXIT_OK and jobs == 1  # two due checks, one source, one pass
    out = capsys.readouterr().out
    assert re.search(r"passed +cli_positive +0/3", out) and re.search(r"passed +cli_labelled", out)
    assert "cli_daily" not in out
    assert main(["run", "--due", "--at", "2026-11-22T07:00:00"]) == EXIT_OK  # nothing new due
    assert "cli_positive" not in capsys.readouterr().out.split("due at")[-1]


def test_list_due_run_history_and_exit_codes(spark, cli_env, capsys):
    assert main(["list", "--at", "2026-11-22T05:50:00"]) == EXIT_OK
    listing = capsys.readouterr().out
    assert "cli_daily" in listing and "next 2026-11-22T06:00:00+00:00" in listing
    assert main(["due", "--at", "2026-11-22T06:00:00"]) == EXIT_OK
    assert "cli_daily" in capsys.readouterr().out
    cli_env.write_text("n,label\n1,a\n-2,\n")
    assert (
        main(["run", "cli_positive", "cli_labelled", "--at", "2026-11-22T06:00:00"]) == EXIT_FAILED
    )
    assert main(["history", "cli_positive"]) == EXIT_OK
    assert re.search(r"FAILED \(level ERROR\) +cli_positive +1/2 failing", capsys.readouterr().out)
    assert main(["run", "no_such_check"]) == EXIT_USAGE
    cli_env.write_text("n,label\nnot-a-number,a\n")
    assert main(["run", "cli_positive"]) == 3  # could not be evaluated


def test_report_command_writes_the_page(spark, cli_env, tmp_path, capsys):
    main(["run", "cli_positive", "--at", "2026-11-22T06:00:00"])
    out = tmp_path / "report.html"
    assert main(["report", "--out", str(out)]) == EXIT_OK
    assert "cli_positive" in out.read_text()


def test_run_check_records_and_alerts_with_environment_settings(spark, cli_env):
    import datetime as dt

    from scheduling import run_check
    from scheduling.history import history
    from scheduling.settings import Settings
    from tests.scheduling.cli_fixture_checks import CliDaily

    cli_env.write_text("n,label\n1,a\n20,b\n")
    outcome = run_check(CliDaily, now=dt.datetime(2026, 11, 22, 6, 0, tzinfo=dt.UTC))
    assert outcome.failing == 1
    [record] = history(Settings.from_environment().engine, "cli_daily")
    assert record.outcome == outcome


@pytest.mark.parametrize(
    "argv",
    [
        ["due", "--at", "2013-13-45"],
        ["run", "--due", "--at", "yesterday"],
        ["silence", "add", "x*", "--until", "soon", "--comment", "why"],
    ],
)
def test_a_time_that_is_not_iso_is_a_usage_error(argv, capsys):
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == EXIT_USAGE
    assert "not an ISO time" in capsys.readouterr().err
