"""The tick as named stages (scheduling/tick/pipeline.py): every stage runs once, in the order
docs/architecture.md gives, each timed; `dq run --json` carries the timings; the spool is
replayed once; checks share an engine pass by their data, and `dq run` says which did and why
one did not."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from scheduling.cli import main
from scheduling.cli.exits import EXIT_OK
from scheduling.tick import pipeline
from scheduling.tick.passes import OWN_TRANSFORMATION
from tests.metrics.jobs import count_jobs

ARCHITECTURE = Path(__file__).parents[2] / "docs" / "architecture.md"
STAGE_NAMES = [stage.__name__ for stage in pipeline.STAGES]


@pytest.fixture
def tick_env(tmp_path, monkeypatch):
    csv = tmp_path / "numbers.csv"
    csv.write_text("n,label\n1,a\n2,b\n3,\n")
    monkeypatch.setenv("DQ_TICK_CSV", str(csv))
    monkeypatch.setenv("DQ_CHECKS", "tests.scheduling.tick_checks")
    monkeypatch.setenv("DQ_DATABASE_URL", f"sqlite:///{tmp_path / 'dq.db'}")
    monkeypatch.setenv("DQ_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("DQ_CONFIG", str(tmp_path / "none.toml"))
    return csv


def test_the_stages_are_the_ones_the_architecture_lists_in_order():
    text = ARCHITECTURE.read_text()
    section = text.split("## The tick", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"^\d+\. \*\*`(\w+)`\*\*", section, flags=re.MULTILINE)
    assert listed == STAGE_NAMES
    assert len(set(STAGE_NAMES)) == len(STAGE_NAMES)


def test_dq_run_json_times_every_stage_and_they_add_up(spark, tick_env, capsys, monkeypatch):
    replays = []
    replay = pipeline.replay

    def counted(*args, **kwargs):
        replays.append(args[1])
        return replay(*args, **kwargs)

    monkeypatch.setattr(pipeline, "replay", counted)
    code = main(["run", "--due", "--json", "--at", "2026-11-22T07:00:00"])
    assert code == 1  # the labelled check fails on the row with no label
    document = json.loads(capsys.readouterr().out)
    timings = document["timings"]
    assert list(timings) == STAGE_NAMES  # every stage, once, in order
    assert all(spent >= 0 for spent in timings.values())
    spent, duration = sum(timings.values()), document["duration_s"]
    assert spent <= duration + 1e-3  # rounded to 0.1 ms each
    # what is not in a stage is the loop between them: a sliver of the tick
    assert duration - spent < 0.05 * duration + 0.05
    assert len(replays) == 1  # the spool is replayed once per tick
    assert {o["check"] for o in document["outcomes"]} == {
        "tick_raw",
        "tick_labelled_above_one",
        "tick_small_above_one",
    }


@pytest.mark.classic_only  # counts jobs through the SparkContext
def test_checks_share_a_pass_by_their_data_not_their_dataframe_object(spark, tick_env, capsys):
    code, jobs = count_jobs(spark, lambda: main(["run", "--due", "--at", "2026-11-22T07:00:00"]))
    assert code == 1
    # the raw check with the source's full scan, and the two filtered checks together (each built
    # its own `data.filter("n > 1")`): two passes, where DataFrame identity made three
    assert jobs == 2
    out = capsys.readouterr().out
    assert (
        "engine pass: 2 checks over " in out
        and "tick_labelled_above_one, tick_small_above_one" in out
    )
    lines = [line for line in out.splitlines() if line.startswith("engine pass: ")]
    assert len(lines) == 2 and all(OWN_TRANSFORMATION in line for line in lines)
    assert any("1 check over " in line and ": tick_raw (" in line for line in lines)


def test_dq_run_json_lists_the_passes(spark, tick_env, capsys):
    assert main(["run", "--due", "--json", "--at", "2026-11-22T07:00:00"]) == 1
    passes = json.loads(capsys.readouterr().out)["passes"]
    by_checks = {tuple(p["checks"]): p for p in passes}
    assert set(by_checks) == {("tick_raw",), ("tick_labelled_above_one", "tick_small_above_one")}
    assert all(p["apart_because"] == OWN_TRANSFORMATION for p in passes)
    assert all(p["sources"] == by_checks[("tick_raw",)]["sources"] for p in passes)
    assert len(passes[0]["sources"]) == 1


def test_checks_reading_a_source_the_same_way_print_no_apart_reason(spark, tick_env, capsys):
    from scheduling.cli.run_output import pass_lines
    from scheduling.tick.passes import EnginePass

    together = EnginePass(("a", "b"), ("numbers.csv",), 0.5)
    alone = EnginePass(("c",), ("other.csv",), 0.1)
    assert pass_lines([together, alone]) == ["engine pass: 2 checks over numbers.csv: a, b"]
    assert main(["run", "tick_raw", "--at", "2026-11-22T07:00:00"]) == EXIT_OK
    assert "engine pass" not in capsys.readouterr().out  # one check: nothing to say
