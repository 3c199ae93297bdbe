"""scheduling.config reads the environment and dq.toml once; the rest of scheduling/ and the DAG
take its values."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest

from scheduling.config import Config, DagConfig

ROOT = Path(__file__).resolve().parents[2]
#: Modules that may still read the environment, and why.
READERS = {
    "scheduling/config.py": "the one reader",
    "scheduling/cli/console.py": "NO_COLOR and TERM, the terminal's conventions",
}


def test_only_the_config_module_reads_the_environment() -> None:
    read = re.compile(r"os\.environ|os\.getenv")
    modules = [*ROOT.joinpath("scheduling").rglob("*.py"), *ROOT.joinpath("dags").glob("*.py")]
    readers = {p.relative_to(ROOT).as_posix() for p in modules if read.search(p.read_text())}
    assert readers <= set(READERS), sorted(readers - set(READERS))


def test_the_environment_and_dq_toml_are_read_into_one_value(tmp_path) -> None:
    path = tmp_path / "team.toml"
    path.write_text(
        'checks = ["teamchecks"]\n\n[policies.default]\nroutes = { console = "error" }\n'
    )
    config = Config.from_environment(
        {
            "DQ_CONFIG": str(path),
            "DQ_DATABASE_URL": "sqlite:////srv/dq.db",
            "DQ_STATE_DIR": "/srv/dq",
            "DQ_SMTP_HOST": "smtp.internal",
            "DQ_EMAIL_TO": "a@x, b@x",
            "DQ_SLACK_CHANNEL": "C1",  # without SLACK_BOT_TOKEN: no Slack receiver
            "AIRFLOW_CTX_DAG_ID": "dq_checks",
        }
    )
    assert config.database_url == "sqlite:////srv/dq.db"
    assert config.state_path == Path("/srv/dq")
    assert config.document["checks"] == ["teamchecks"]
    assert config.check_packages().names == ("teamchecks",)
    assert config.email is not None and config.email.recipients == ("a@x", "b@x")
    assert config.slack_channel is None and config.under_airflow
    named = Config.from_environment({"DQ_CONFIG": str(path), "DQ_CHECKS": "a.b, c"})
    assert named.check_packages().names == ("a.b", "c")


def test_defaults_without_environment_or_file(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    config = Config.from_environment({})
    assert config.document == {} and config.state_path == Path(".dq")
    assert config.database_url is None and not config.under_airflow
    assert config.check_packages().names == ("checks",)


def test_the_dag_reads_its_replay_range_and_retries() -> None:
    beside = Path("/dags/dq_checks.json")
    default = DagConfig.from_environment(default_manifest=beside, environ={})
    assert default.manifest == beside and default.end is None and not default.catchup
    assert default.start == dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    assert (default.retries, default.retry_delay) == (1, dt.timedelta(seconds=120))
    replay = DagConfig.from_environment(
        default_manifest=beside,
        environ={
            "DQ_MANIFEST": "/srv/m.json",
            "DQ_DAG_START": "2026-03-01T00:00:00",
            "DQ_DAG_END": "2026-03-02T00:00:00+00:00",
            "DQ_DAG_CATCHUP": "1",
        },
    )
    assert replay.manifest == Path("/srv/m.json") and replay.catchup
    assert replay.start == dt.datetime(2026, 3, 1, tzinfo=dt.UTC)
    assert replay.end == dt.datetime(2026, 3, 2, tzinfo=dt.UTC)


def test_a_bad_dq_toml_checks_list_names_the_file(tmp_path) -> None:
    path = tmp_path / "dq.toml"
    path.write_text('checks = "teamchecks"\n')
    with pytest.raises(ValueError, match="must be a list of package names"):
        Config.from_environment({"DQ_CONFIG": str(path)}).check_packages()


def test_the_claim_lease_comes_from_config() -> None:
    from scheduling.claims import DEFAULT_LEASE, lease_of

    config = Config.from_environment({"DQ_CLAIM_LEASE_SECONDS": "90"})
    assert lease_of(config.claim_lease_s) == dt.timedelta(seconds=90)
    assert lease_of(Config.from_environment({}).claim_lease_s) == DEFAULT_LEASE
    with pytest.raises(ValueError, match="DQ_CLAIM_LEASE_SECONDS must be a positive number"):
        lease_of("0")
