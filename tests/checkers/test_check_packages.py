"""Which packages hold a project's checks: DQ_CHECKS wins over dq.toml's `checks`, the default
is `checks`, and a package beside dq.toml imports without being installed."""

from __future__ import annotations

import sys
import uuid

import pytest

from checkers.check_packages import apart, checks_packages, configured_packages


def test_dq_checks_wins_over_dq_toml_and_the_default_is_checks(tmp_path):
    config = tmp_path / "dq.toml"
    config.write_text('checks = ["team_a", "team_b.rules"]\n[receivers.ops]\ntype = "console"\n')
    both = {"DQ_CHECKS": " a.b, c ", "DQ_CONFIG": str(config)}
    assert checks_packages(both) == ("a.b", "c")
    from_file = configured_packages({"DQ_CONFIG": str(config)})
    assert (from_file.names, from_file.source) == (("team_a", "team_b.rules"), str(config))
    assert checks_packages({"DQ_CONFIG": str(tmp_path / "none.toml")}) == ("checks",)
    config.write_text("[receivers.ops]\ntype = 'console'\n")  # a dq.toml without the key
    assert checks_packages({"DQ_CONFIG": str(config)}) == ("checks",)


@pytest.mark.parametrize("value", ['"teamchecks"', "[1]", '[""]'])
def test_a_malformed_checks_key_says_how_to_write_it(tmp_path, value):
    config = tmp_path / "dq.toml"
    config.write_text(f"checks = {value}\n")
    with pytest.raises(ValueError, match=r'must be a list of package names, e.g. checks = \["'):
        checks_packages({"DQ_CONFIG": str(config)})


def test_a_package_beside_dq_toml_becomes_importable(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "path", list(sys.path))  # restored after the test
    name = f"dq_beside_{uuid.uuid4().hex[:8]}"
    (tmp_path / name).mkdir()
    (tmp_path / name / "__init__.py").write_text("")
    (tmp_path / "dq.toml").write_text(f'checks = ["{name}.rules"]\n')
    assert checks_packages({"DQ_CONFIG": str(tmp_path / "dq.toml")}) == (f"{name}.rules",)
    assert sys.path[0] == str(tmp_path)
    __import__(name)


def test_examples_stay_apart_unless_named():
    assert apart("checks.examples.referential", ["checks"])
    assert apart("checks.examples", ["checks", "teamchecks"])
    assert not apart("checks.examples.referential", ["checks.examples"])
    assert not apart("checks.examples.referential", ["checks", "checks.examples.referential"])
    assert apart("checks.examples.delays", ["checks", "checks.examples.referential"])
    assert not apart("checks.examples_of_mine", ["checks"])
    assert apart("checks.pytest_plugin", ["checks"])
