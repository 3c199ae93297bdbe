"""Where each metric came from, as `dq run --json`, the report and the metric history say:
Size and Completeness of a Parquet file from its footer (`metadata`, with the bytes not read),
its Mean from a scan; `dq run --no-metadata` and DQ_METADATA_ANSWERS=0 scan them all."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import sqlalchemy as sa

from checkers.outcome import CheckOutcome, Status
from scheduling.cli import main
from scheduling.cli.exits import EXIT_CRASH
from scheduling.report import reading

CHECK = "orders_from_footers"
FOOTER = {"six orders": "metadata", "notes mostly set": "metadata", "positive quantities": "scan"}


@pytest.fixture()
def project(tmp_path, monkeypatch):
    pq.write_table(
        pa.table({"qty": [1, 2, 3, 4, 5, 6], "note": ["a", None, "c", "d", None, "f"]}),
        tmp_path / "orders.parquet",
    )
    monkeypatch.setenv("DQ_CHECKS", "tests.scheduling.metric_source_checks")
    monkeypatch.setenv("DQ_METRIC_SOURCE_DIR", str(tmp_path))
    monkeypatch.setenv("DQ_DATABASE_URL", f"sqlite:///{tmp_path / 'dq.db'}")
    monkeypatch.setenv("DQ_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("DQ_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.delenv("DQ_METADATA_ANSWERS", raising=False)
    return tmp_path


def _run(capsys, *options: str, check: str = CHECK) -> dict[str, object]:
    assert main(["run", check, "--json", "--at", "2026-11-22T06:00:00", *options]) == 0
    document = json.loads(capsys.readouterr().out)
    return document["outcomes"][0]  # type: ignore[index,no-any-return]


def _history_sources(root) -> list[tuple[str, str]]:
    engine = sa.create_engine(f"sqlite:///{root / 'dq.db'}")
    with engine.connect() as connection:
        rows = connection.exec_driver_sql("SELECT name, source FROM dq_metrics ORDER BY id")
        return sorted({(r[0], r[1]) for r in rows})


def test_json_report_and_history_say_which_metrics_came_from_the_footer(project, capsys):
    entry = _run(capsys)
    assert entry["metric_sources"] == FOOTER
    assert entry["bytes_not_read"] == 0  # the Mean still scanned the file
    assert _history_sources(project) == [
        ("Completeness", "metadata"),
        ("Mean", "scan"),
        ("Size", "metadata"),
    ]
    counted = _run(capsys, check="orders_counted")  # the footer answers it whole: no scan
    assert counted["metric_sources"] == {"six orders": "metadata"}
    assert counted["bytes_not_read"] == (project / "orders.parquet").stat().st_size


def test_no_metadata_scans_every_metric_for_one_run_and_the_setting_for_every_run(
    project, capsys, monkeypatch
):
    entry = _run(capsys, "--no-metadata")
    assert set(entry["metric_sources"].values()) == {"scan"}  # type: ignore[attr-defined]
    monkeypatch.setenv("DQ_METADATA_ANSWERS", "off")
    assert set(_run(capsys)["metric_sources"].values()) == {"scan"}  # type: ignore[attr-defined]
    monkeypatch.setenv("DQ_METADATA_ANSWERS", "sometimes")  # refused, naming the variable
    assert main(["run", CHECK, "--json"]) == EXIT_CRASH
    assert "DQ_METADATA_ANSWERS must be on or off" in capsys.readouterr().err


def test_the_report_tells_metrics_from_metadata_and_the_bytes_they_spared():
    outcome = CheckOutcome(
        "c",
        Status.PASSED,
        metric_sources={"rows": "metadata", "notes": "metadata", "mean": "scan"},
        reading={"rows_read": 0, "bytes_not_read": 2048},
    )
    assert reading(outcome) == "0 [2 of 3 metrics from metadata, 2,048 bytes not read]"
    restored = CheckOutcome.from_json(outcome.to_json())
    assert restored.metric_sources == outcome.metric_sources
