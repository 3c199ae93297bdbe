from __future__ import annotations

import datetime as dt
import decimal
import json
import subprocess
import sys

from checkers import AlertLevel, CheckOutcome, Status


def test_outcome_round_trips_through_json():
    outcome = CheckOutcome(
        check="flights_dest",
        status=Status.FAILED,
        level=AlertLevel.CRITICAL,
        failing=3,
        total=12,
        unexcused=2,
        description="why",
        tolerance="fewer than 2 failing",
        sample=({"dest": "BQN", "when": "2013-01-01T05:00:00"},),
        metrics={"failing": 3},
        started_at=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
        finished_at=dt.datetime(2026, 1, 1, 0, 0, 3, tzinfo=dt.UTC),
        timings={"load_s": 1.5},
        tags=("flights",),
    )
    again = CheckOutcome.from_json(outcome.to_json())
    assert again == outcome
    assert again.share == 0.25
    assert outcome.summary() == ("flights_dest: FAILED (level CRITICAL), 3/12 failing (25.00%)")


def test_sample_values_become_json_safe():
    outcome = CheckOutcome(
        check="c",
        status=Status.FAILED,
        sample=(
            {"at": dt.datetime(2013, 1, 1, 5), "amount": decimal.Decimal("1.5"), "raw": b"\x01"},
        ),
    )
    assert outcome.to_dict()["sample"] == [
        {"at": "2013-01-01T05:00:00", "amount": 1.5, "raw": "01"}
    ]


def test_nan_and_infinite_metrics_are_written_as_text_so_the_json_is_valid():
    """A mean over a column holding an infinity is infinite: json.dumps would write the bare
    token Infinity, which no JSON reader accepts (issue 29)."""
    outcome = CheckOutcome(
        check="c",
        status=Status.FAILED,
        metrics={"mean": float("inf"), "minimum": float("-inf"), "stddev": float("nan")},
        reading={"rows_read": 3},
        failing_keys=(float("inf"),),
    )

    def refuse(constant: str) -> None:
        raise ValueError(f"not JSON: {constant}")

    written = json.loads(outcome.to_json(), parse_constant=refuse)
    assert written["metrics"] == {"mean": "Infinity", "minimum": "-Infinity", "stddev": "NaN"}
    assert written["failing_keys"] == ["Infinity"] and written["reading"] == {"rows_read": 3}


def test_alerting_side_imports_without_spark():
    code = (
        "import sys; from checkers import AlertLevel, CheckOutcome, LessThan, Status; "
        "import checkers.tolerances, checkers.levels, checkers.outcome; "
        "print('pyspark' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_error_and_tolerated_summaries():
    assert CheckOutcome("c", Status.ERROR, error="boom").summary() == "c: could not run: boom"
    tolerated = CheckOutcome("c", Status.TOLERATED, failing=1, total=4, tolerance="fewer than 2")
    assert "within fewer than 2" in tolerated.summary()
    assert not tolerated.alerting and CheckOutcome("c", Status.ERROR).alerting
