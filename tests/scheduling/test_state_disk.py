"""The local disk or the SQLite file breaks under `dq run` (issue 28, acceptance 1 and 6): a full
or read-only state directory (a real 1 MiB tmpfs, mounted here because the tests run as root;
elsewhere a folder made read-only) loses no outcome: each is recorded and alerted without its
failing-rows link, the failure reported, exit 4. A corrupt SQLite file is an outage: exit 4,
outcomes on stderr and in the spool, and `dq doctor` says how to recover. With the spool unwritable
too, the outcomes are on stderr in full. Files dq creates are private whatever the umask."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from scheduling.cli.doctor import database_finding, files_finding
from scheduling.cli.exits import EXIT_INFRA
from scheduling.config import Config
from tests.scheduling.outages import dq, outage_env, spooled
from tests.scheduling.state_disk import (
    AT,
    broken_disk,
    database,
    mode,
    private_paths,
    recorded,
    runs_under_umask_022,
)


@pytest.mark.parametrize("full", [True, False], ids=["full", "read-only"])
def test_a_broken_state_disk_loses_no_outcome(tmp_path, spark, full):
    env = outage_env(tmp_path)
    url = database(tmp_path)
    with broken_disk(Path(env["DQ_STATE_DIR"]), full=full):
        run = dq(env, url, "run", "--due", "--at", AT)
        assert run.returncode == EXIT_INFRA, run.stderr
        assert "local disk: cli_positive: failing rows not written" in run.stdout
        found_runs, found_incidents, sent = recorded(url)
    statuses = [(c, s) for c, s, _ in found_runs]
    assert statuses == [("cli_labelled", "passed"), ("cli_positive", "failed")]
    # recorded without the link
    assert all(not json.loads(o).get("failing_rows") for _, _, o in found_runs)
    assert [tuple(i) for i in found_incidents] == [("cli_positive", "open")]
    # alerted: the console told; the file receiver (on the broken disk) waits for a later run
    assert ("console", "sent") in [tuple(n) for n in sent]
    assert "[DQ] FAILED (level ERROR): cli_positive" in run.stderr + run.stdout


def test_a_corrupt_sqlite_file_is_an_outage_and_doctor_says_how_to_recover(tmp_path, spark):
    env = outage_env(tmp_path)
    url = database(tmp_path)
    Path(url.database).parent.mkdir(parents=True)
    Path(url.database).write_bytes(os.urandom(8192))
    run = dq(env, url, "run", "--due", "--at", AT)
    assert run.returncode == EXIT_INFRA, run.stderr
    assert "file is not a database" in run.stderr
    assert "[DQ] FAILED (level ERROR): cli_positive: 1 of 2 elements failing" in run.stderr
    assert sorted(e["check"] for e in spooled(env)) == ["cli_labelled", "cli_positive"]
    for command in ("deliver", "history"):
        assert dq(env, url, command).returncode == EXIT_INFRA
    finding = database_finding(url.render_as_string())
    assert not finding.ok and finding.detail.startswith("corrupt:")
    assert "move the file aside" in finding.fix


def test_with_the_spool_unwritable_too_the_outcomes_are_on_stderr_in_full(tmp_path, spark):
    env = outage_env(tmp_path)
    url = database(tmp_path)
    Path(url.database).parent.mkdir(parents=True)
    Path(url.database).write_bytes(os.urandom(8192))
    with broken_disk(Path(env["DQ_STATE_DIR"]), full=False):
        run = dq(env, url, "run", "--due", "--at", AT)
    assert run.returncode == EXIT_INFRA, run.stderr
    entries = [
        json.loads(line.split("; in full: ", 1)[1].rsplit("}: ", 1)[0] + "}")
        for line in run.stderr.splitlines()
        if "not spooled either" in line
    ]
    assert sorted(e["check"] for e in entries) == ["cli_labelled", "cli_positive"]
    positive = next(e for e in entries if e["check"] == "cli_positive")
    assert positive["outcome"]["failing"] == 1 and positive["window"] is not None


def test_files_holding_row_samples_are_private_whatever_the_umask(tmp_path, spark):
    env = outage_env(tmp_path)
    url = database(tmp_path)
    runs = runs_under_umask_022(env, url)
    assert runs.first.returncode == 1
    assert runs.left_open == []  # dq's commands close their database connections
    assert len(runs.wal) == 2 and runs.wal == dict.fromkeys(runs.wal, 0o600)
    assert runs.second.returncode == 4
    folders, files = private_paths(env, url)
    assert {str(p): mode(p) for p in folders} == {str(p): 0o700 for p in folders}
    assert {str(p): mode(p) for p in files} == {str(p): 0o600 for p in files}
    config = Config.from_environment({**env, "DQ_DATABASE_URL": url.render_as_string()})
    assert files_finding(config).ok
    state = Path(env["DQ_STATE_DIR"])
    files[0].chmod(0o644)  # a failing-rows file: doctor checks the folders, spool and database
    (state / "spool").chmod(0o755)
    finding = files_finding(config)
    assert not finding.ok and f"{state / 'spool'} is 0755" in finding.detail
