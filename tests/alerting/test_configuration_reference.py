"""docs/configuration.md cannot fall behind: every key the dq.toml loader accepts is documented
in its section, every DQ_* variable the packages read is in the environment tables, the complete
example loads, and a key the loader does not know is refused by name in every table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from alerting.config import RECEIVER_TYPES, accepted_keys, load_config

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "docs" / "configuration.md"
PACKAGES = ("checkers", "checks", "alerting", "scheduling", "dags")
#: The heading of each section of the reference that documents a part of accepted_keys().
HEADINGS = {
    "top level": "Top-level keys",
    "policies": "`[policies.NAME]`",
    "silences": "`[[silences]]`",
    "failing_rows": "`[failing_rows]`",
    "retention": "`[retention]`",
    **{f"receivers ({kind})": f'`type = "{kind}"`' for kind in RECEIVER_TYPES},
}


def sections(text: str) -> dict[str, str]:
    """Each heading's text (to the next heading of any level)."""
    parts = re.split(r"^#{2,4} (.+)$", text, flags=re.MULTILINE)
    return {parts[i].strip(): parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def test_every_key_the_loader_accepts_is_documented_in_its_section():
    found = sections(REFERENCE.read_text())
    keys = accepted_keys()
    assert set(keys) == set(HEADINGS), "a new part of dq.toml needs a section in the reference"
    for part, names in keys.items():
        body = found.get(HEADINGS[part])
        assert body is not None, f"no section {HEADINGS[part]!r} in {REFERENCE.name}"
        if part.startswith("receivers"):
            body += found["`[receivers.NAME]`"]  # where `type` itself is described
        missing = [n for n in names if f"`{n}`" not in body]
        assert not missing, f"{part}: {missing} undocumented under {HEADINGS[part]}"


def test_every_environment_variable_the_packages_read_is_documented():
    used: set[str] = set()
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            used |= set(re.findall(r"[\"'](DQ_[A-Z0-9_]+)[\"']", path.read_text()))
    documented = sections(REFERENCE.read_text())
    tables = "".join(
        body for heading, body in documented.items() if heading != "A complete example"
    )
    missing = sorted(v for v in used if f"`{v}`" not in tables)
    assert used and not missing, f"undocumented in {REFERENCE.name}: {missing}"


def test_the_complete_example_loads(tmp_path, monkeypatch):
    for name in ("SLACK_BOT_TOKEN", "SMTP_USER", "SMTP_PASSWORD", "PAGERDUTY_ROUTING_KEY"):
        monkeypatch.setenv(name, "set")  # a *_env must name a variable set where dq runs
    [example] = re.findall(
        r"```toml\n(.*?)```", sections(REFERENCE.read_text())["A complete example"], re.S
    )
    path = tmp_path / "dq.toml"
    path.write_text(example)
    config = load_config(path)
    assert set(config.receivers) == {"slack-dq", "team-mail", "oncall", "log", "audit"}
    assert set(config.policies) == {"default", "quiet"} and len(config.silences) == 1
    assert config.failing_rows_url == "https://dq.example.com/failing"
    for section, names in accepted_keys().items():  # the example shows every key
        missing = [
            n
            for n in names
            if not re.search(rf"^{re.escape(n)} = |\[{n}\b|\[\[{n}\]\]", example, re.M)
        ]
        assert not missing, f"{section}: {missing} not in the complete example"


SECTIONS = [
    "nonsense = 1\n",
    '[receivers.s]\ntype = "slack"\nchannel = "C1"\nnonsense = 1\n',
    '[receivers.m]\ntype = "email"\nhost = "h"\nsender = "a@b.c"\nrecipients = ["d@e.f"]\n'
    "nonsense = 1\n",
    '[receivers.p]\ntype = "pagerduty"\nnonsense = 1\n',
    '[receivers.c]\ntype = "console"\nnonsense = 1\n',
    '[receivers.f]\ntype = "file"\npath = "a.jsonl"\nnonsense = 1\n',
    "[policies.default]\nnonsense = 1\n",
    '[[silences]]\ncheck = "a"\nstarts_at = 2026-01-01T00:00:00Z\n'
    "ends_at = 2026-01-02T00:00:00Z\nnonsense = 1\n",
    "[failing_rows]\nnonsense = 1\n",
]


@pytest.mark.parametrize("text", SECTIONS)
def test_an_unknown_key_is_refused_naming_it_in_every_table(tmp_path, text):
    path = tmp_path / "dq.toml"
    path.write_text(text)
    with pytest.raises(ValueError, match=r"unknown key 'nonsense' in .*docs/configuration\.md"):
        load_config(path)
