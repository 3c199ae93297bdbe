"""The DAG's manifest: task ids valid for Airflow, broken checks listed, `dq manifest --out` and
`--check`, and a manifest refused once the check files change."""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
import sys

import pytest

from checks.problems import problem_outcome
from scheduling.airflow.manifest import StaleManifest, load_manifest, manifest_drift, task_ids
from scheduling.airflow.tasks import manifest_failure, stale_manifest, summary_of
from scheduling.cli import main
from scheduling.cli.exits import EXIT_INVALID, EXIT_OK
from scheduling.config import Config

CHECK = """
from checkers import PredicateSingleDatasetChecker
from checkers.parsers import CsvParser
from checks import QualityCheck
from scheduling.clocks import Cron


class {name}(QualityCheck):
    clock = Cron("0 * * * *")
    parser = CsvParser("x.csv", schema="n int")

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "n > 0")
"""


def test_task_ids_are_valid_and_distinct():
    ids = task_ids(["orders.daily", "orders_daily", "module:teams.x", "plain"])
    assert ids["plain"] == "plain" and ids["module:teams.x"] == "module_teams_x"
    assert len(set(ids.values())) == 4
    assert all(c.isalnum() or c in "_-" for i in ids.values() for c in i)


@pytest.fixture
def team(tmp_path, monkeypatch):
    package = tmp_path / "team_manifest_checks"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "orders.py").write_text(CHECK.format(name="OrdersPositive"))
    (package / "broken.py").write_text("def broken(:\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("DQ_CHECKS", "team_manifest_checks")
    yield package
    for name in [m for m in sys.modules if m.startswith("team_manifest_checks")]:
        del sys.modules[name]


def test_manifest_out_check_and_staleness(team, tmp_path, capsys):
    out = tmp_path / "deploy" / "dq_checks.json"
    assert main(["manifest", "--check", "--out", str(out)]) == EXIT_INVALID  # not there yet
    assert main(["manifest", "--out", str(out)]) == EXIT_OK
    assert main(["manifest", "--check", "--out", str(out)]) == EXIT_OK
    entries = {e.name: e for e in load_manifest(out)}
    assert entries["orders_positive"].clock == {"cron": "0 * * * *", "tz": "UTC"}
    broken = entries["module:team_manifest_checks.broken"]
    assert broken.task_id == "module_team_manifest_checks_broken" and "SyntaxError" in str(
        broken.problem
    )
    assert manifest_drift(out) is None
    (team / "refunds.py").write_text(CHECK.format(name="RefundsPositive"))  # a new check
    assert re.search(r"new team_manifest_checks/refunds\.py", str(manifest_drift(out)))
    assert set(entries) == {e.name for e in load_manifest(out)}  # stale: the DAG still loads it
    assert main(["manifest", "--check", "--out", str(out)]) == EXIT_INVALID
    assert "out of date" in capsys.readouterr().out
    main(["manifest", "--out", str(out)])
    assert "refunds_positive" in {e.name for e in load_manifest(out)}
    (team / "orders.py").write_text(CHECK.format(name="OrdersPositive") + "# edited\n")
    drift = str(manifest_drift(out))
    assert "changed team_manifest_checks/orders.py" in drift and "dq manifest --out" in drift


def test_a_stale_manifest_is_an_error_for_the_platforms_owner_in_one_line(team, tmp_path, caplog):
    out = tmp_path / "dq_checks.json"
    main(["manifest", "--out", str(out)])
    config = Config.from_environment({"DQ_PLATFORM_OWNER": "platform-team"})
    assert stale_manifest(out, config) is None
    (team / "orders.py").write_text(CHECK.format(name="OrdersPositive") + "# edited\n")
    problem = stale_manifest(out, config)
    assert problem is not None and (problem.name, problem.owner) == ("dq_manifest", "platform-team")
    outcome = problem_outcome(problem, dt.datetime(2026, 11, 22, 7, tzinfo=dt.UTC))
    caplog.set_level(logging.INFO, logger="dq.outcomes")
    failure = manifest_failure(summary_of(outcome))  # the `manifest` task fails with it
    assert "changed team_manifest_checks/orders.py" in str(failure.code)
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [("ERROR", failure.code)]


def test_an_old_manifest_version_is_refused(tmp_path):
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"checks": [{"name": "x", "clock": None}]}))
    with pytest.raises(StaleManifest, match="manifest version None"):
        load_manifest(old)


def test_a_dag_file_copied_before_the_move_still_imports() -> None:
    """What the DAG imported from scheduling.manifest and scheduling.airflow_tasks."""
    from scheduling import airflow_tasks
    from scheduling import manifest as old
    from scheduling.airflow import manifest, tasks

    assert old.MANIFEST_ENV == "DQ_MANIFEST"
    for name in ("Entry", "asset_key", "load_manifest", "task_ids"):
        assert getattr(old, name) is getattr(manifest, name)
    for name in ("OUTCOMES", "due", "due_on_assets", "evaluate", "publication", "settle"):
        assert getattr(airflow_tasks, name) is getattr(tasks, name)


def test_doctor_checks_the_manifest_the_deployed_dag_reads(team, tmp_path):
    from scheduling.cli.doctor import manifest_finding

    dags = tmp_path / "airflow-dags"
    deployed = dags / "dq_checks.json"
    assert main(["manifest", "--out", str(deployed)]) == EXIT_OK
    found = manifest_finding(None, str(dags))  # no DQ_MANIFEST: the DAGs folder's, not ours
    assert found.ok and found.detail.startswith(f"{deployed}: ") and "current" in found.detail
    (team / "orders.py").write_text(CHECK.format(name="OrdersPositive") + "# edited\n")
    stale = manifest_finding(None, str(dags))
    assert not stale.ok and "changed team_manifest_checks/orders.py" in stale.detail
