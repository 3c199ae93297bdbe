"""A dq.toml the loader refuses is a usage error (exit 2) of every command, naming the file, the
line and the key: never "all OK", never a crash (docs/configuration.md)."""

from __future__ import annotations

import pytest

from checkers.dq_toml import key_line
from scheduling.cli import main
from scheduling.cli.exits import EXIT_INVALID, EXIT_USAGE

CASES = [
    ('chekcs = ["a"]\n', 1, "unknown key 'chekcs' in the top level; did you mean 'checks'?"),
    ('checks = "teamchecks"\n', 1, "`checks` must be a list of package names"),
    ('checks = ["tests.scheduling.cli_fixture_checks",\n\n[receivers.x]\n', 3, "not valid TOML"),
    (
        '[receivers.s]\ntype = "slack"\nchannel = "C1"\n\ntimeout_s = "30"\n',
        5,
        "timeout_s in [receivers.s] must be a number, got '30'",
    ),
    (
        '[policies.default]\nroutes = { console = "warning" }\nescalate_after_run = 4\n',
        3,
        "did you mean 'escalate_after_runs'?",
    ),
    (
        '[[silences]]\ncheck = "a"\nstarts_at = 2026-01-01T00:00:00Z\n'
        "ends_at = 2026-01-02T00:00:00Z\n"
        '[[silences]]\ncheck = "b"\ncomments = "x"\n',
        7,
        "unknown key 'comments' in [[silences]]",
    ),
]


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DQ_CHECKS", raising=False)
    monkeypatch.setenv("DQ_CONFIG", str(tmp_path / "dq.toml"))
    monkeypatch.setenv("DQ_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("DQ_DATABASE_URL", f"sqlite:///{tmp_path / 'dq.db'}")
    return tmp_path / "dq.toml"


@pytest.mark.parametrize(("text", "line", "reason"), CASES)
def test_validate_doctor_and_every_command_refuse_the_file(project, capsys, text, line, reason):
    project.write_text(text)
    for command in (["validate"], ["doctor"], ["list"], ["run", "--due"], ["report"]):
        assert main(command) == EXIT_USAGE, command
        err = capsys.readouterr().err
        assert f"dq {command[0]}: {project}:{line}: " in err and reason in err, err
        assert "crashed" not in err


def test_validate_fails_when_no_check_is_found(project, capsys):
    project.write_text('checks = ["json"]\n')  # a package, but no check in it
    assert main(["validate"]) == EXIT_INVALID
    assert "no checks found in json (" in capsys.readouterr().err


def test_key_lines_follow_tables_arrays_and_quoted_keys():
    text = (
        '# c\nchecks = []\n[receivers."slack-dq"]\ntype = "slack"\n'
        '[[silences]]\n[[silences]]\ncheck = "x"\n'
    )
    assert key_line(text, ("checks",)) == 2
    assert key_line(text, ("receivers", "slack-dq", "type")) == 4
    assert key_line(text, ("receivers", "slack-dq", "channel")) == 3  # absent: its table
    assert key_line(text, ("silences", 1, "check")) == 7
    assert key_line(text, ("policies", "default")) is None
