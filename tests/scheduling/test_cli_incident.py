"""`dq incident list|show|ack|snooze|expected` on a real project database: clear lines, the OS
user as actor (source "cli"), the timeline, exit 2 and a message for an unknown incident or a bad
duration; on SQLite and PostgreSQL."""

from __future__ import annotations

import datetime as dt

import pytest

from alerting import EscalationPolicy, handle_outcome
from checkers import AlertLevel
from scheduling.cli import main
from scheduling.cli.exits import EXIT_OK, EXIT_USAGE
from scheduling.schema import project_database
from tests.alerting.conftest import T0, outcome
from tests.scheduling.databases import fresh_database

POLICY = EscalationPolicy(routes={"slack": AlertLevel.WARNING})
KINDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(params=KINDS)
def incident(request, tmp_path, monkeypatch):
    with fresh_database(request.param, tmp_path) as url:
        engine = project_database(url)
        recorded = handle_outcome(engine, outcome(AlertLevel.ERROR), POLICY, T0)
        engine.dispose()
        monkeypatch.setenv("DQ_DATABASE_URL", url)
        monkeypatch.setenv("DQ_CONFIG", str(tmp_path / "absent.toml"))
        monkeypatch.setenv("DQ_STATE_DIR", str(tmp_path / "state"))
        monkeypatch.setenv("USER", "ops-carol")
        yield recorded.incident.id


def dq(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["incident", *argv, "--at", (T0 + dt.timedelta(minutes=5)).isoformat()])
    out, err = capsys.readouterr()
    return code, out, err


def test_list_ack_snooze_show_expected(incident, capsys):
    code, out, _ = dq(capsys, "list")
    assert code == EXIT_OK
    assert f"{incident:>6}  ERROR     orders_have_customers" in out and "open" in out

    code, out, _ = dq(capsys, "ack", str(incident))
    assert (code, out.splitlines()[0]) == (
        EXIT_OK,
        f"incident {incident}: Acknowledged by @ops-carol",
    )
    code, out, _ = dq(capsys, "ack", str(incident))
    assert (code, out.strip()) == (
        EXIT_OK,
        f"incident {incident}: Already acknowledged by @ops-carol",
    )

    code, out, _ = dq(capsys, "snooze", str(incident), "4h")
    assert code == EXIT_OK and "Snoozed for 4h by @ops-carol (until 2026-11-22 10:05 UTC)" in out
    code, out, _ = dq(capsys, "list")
    assert "acknowledged by @ops-carol" in out and "snoozed until 2026-11-22 10:05 UTC" in out

    code, out, _ = dq(capsys, "expected", str(incident), "--reason", "planned backfill")
    assert code == EXIT_OK and "Marked expected by @ops-carol: planned backfill" in out
    code, out, _ = dq(capsys, "list")
    assert out.strip() == "no open incident"

    code, out, _ = dq(capsys, "show", str(incident))
    assert code == EXIT_OK
    assert "resolved as expected" in out and "reason:               planned backfill" in out
    timeline = out.split("timeline:")[1].splitlines()[1:]
    assert [line.split("  cli    ")[1] for line in timeline] == [
        "Acknowledged by @ops-carol",
        "Snoozed for 4h by @ops-carol (until 2026-11-22 10:05 UTC)",
        "Marked expected by @ops-carol: planned backfill",
    ]


def test_an_unknown_incident_or_a_bad_duration_is_a_usage_error(incident, capsys):
    for argv in (["ack", "999"], ["show", "999"], ["snooze", "999", "1h"], ["expected", "999"]):
        code, out, err = dq(capsys, *argv)
        assert code == EXIT_USAGE and out == ""
        assert f"dq incident {argv[0]}: no incident with id 999" in err
    code, _, err = dq(capsys, "snooze", str(incident), "soon")
    assert code == EXIT_USAGE and "cannot read the duration 'soon'" in err
    code, _, err = dq(capsys, "expected", str(incident), "--known-broken-for", "1d")
    assert code == EXIT_OK  # the outcome lists failing key 7: excused for a day
