"""Alerts link to a run's failing rows where they are published (a base URL), else to a file
on the worker and say so; the outcome records the rows' path under the failing-rows directory,
so a report can link to them relatively. Alerts also link to the incident's page on `dq serve`
(DQ_SERVE_URL) and to the check's runbook."""

from __future__ import annotations

import datetime as dt
import json

import pytest
import sqlalchemy as sa

from alerting import EscalationPolicy, FailingRowsLog
from alerting.receivers import FileReceiver
from alerting.tables import incidents, runs
from checkers import AlertLevel, CheckOutcome
from scheduling.runner import run_checks
from scheduling.schema import project_database
from scheduling.settings import Settings
from tests.scheduling.test_escalated_level import LateOrders

T0 = dt.datetime(2026, 11, 22, 7, 0, tzinfo=dt.UTC)
RELATIVE = "late_orders/20261122T070000Z.jsonl"


def _run(spark, tmp_path, rows: FailingRowsLog):
    engine = project_database(f"sqlite:///{tmp_path / 'dq.db'}")
    alerts = tmp_path / "alerts.jsonl"
    settings = Settings(
        engine,
        {"file": FileReceiver("file", alerts)},
        EscalationPolicy(routes={"file": AlertLevel.WARNING}),
        failing_rows=rows,
    )
    report = run_checks([LateOrders], now=T0, settings=settings, spark=spark)
    with engine.connect() as connection:
        stored = CheckOutcome.from_json(connection.execute(sa.select(runs.c.outcome)).scalar())
    engine.dispose()
    return report.outcomes[0], stored, json.loads(alerts.read_text().splitlines()[-1])["links"]


def test_alerts_link_to_the_published_rows_and_outcomes_keep_their_path(spark, tmp_path):
    rows = FailingRowsLog(tmp_path / "failing", base_url="https://dq.example.com/failing")
    outcome, stored, links = _run(spark, tmp_path, rows)
    assert outcome.failing_rows == stored.failing_rows == RELATIVE
    assert links == {"failing rows": f"https://dq.example.com/failing/{RELATIVE}"}
    written = (tmp_path / "failing" / RELATIVE).read_text().splitlines()
    assert sorted(json.loads(line)["id"] for line in written) == [2, 3]


def test_unpublished_rows_are_linked_as_a_local_file_and_labelled_so(spark, tmp_path):
    outcome, _, links = _run(spark, tmp_path, FailingRowsLog(tmp_path / "failing"))
    [(label, url)] = links.items()
    assert label.startswith("failing rows (a file on ") and "DQ_FAILING_ROWS_URL" in label
    assert url == (tmp_path / "failing" / RELATIVE).as_uri() and outcome.failing_rows == RELATIVE


class LateOrdersWithRunbook(LateOrders, register=False):
    name = "late_orders"
    runbook = "https://wiki.example.com/late-orders"


def test_alerts_link_to_the_incident_page_and_the_checks_runbook(spark, tmp_path):
    engine = project_database(f"sqlite:///{tmp_path / 'dq.db'}")
    alerts = tmp_path / "alerts.jsonl"
    settings = Settings(
        engine,
        {"file": FileReceiver("file", alerts)},
        EscalationPolicy(routes={"file": AlertLevel.WARNING}),
        serve_url="https://dq.example.com",
    )
    run_checks([LateOrdersWithRunbook], now=T0, settings=settings, spark=spark)
    with engine.connect() as connection:
        incident_id = connection.execute(sa.select(incidents.c.id)).scalar()
    engine.dispose()
    links = json.loads(alerts.read_text().splitlines()[-1])["links"]
    assert links["Incident page"] == f"https://dq.example.com/incidents/{incident_id}"
    assert links["Runbook"] == "https://wiki.example.com/late-orders"


def test_the_serve_url_is_read_once_and_refused_when_not_http(tmp_path):
    from scheduling.config import Config
    from scheduling.settings import serve_url

    assert serve_url(Config.from_environment({"DQ_SERVE_URL": "https://dq.example.com/"})) == (
        "https://dq.example.com"
    )
    assert serve_url(Config.from_environment({})) is None
    with pytest.raises(ValueError, match="DQ_SERVE_URL must be the http"):
        serve_url(Config.from_environment({"DQ_SERVE_URL": "dq.example.com"}))
