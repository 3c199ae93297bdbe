"""DataType: value kinds read from each value's string form."""

from __future__ import annotations

import pytest

from checkers.metrics import DataType, Size, run_analysis


def test_string_column_classification(make_df) -> None:
    rows = [("1",), ("-2",), ("3.5",), ("1e10",), ("true",), ("abc",), (None,), ("+ 7",)]
    df = make_df(rows, "v string")
    value = run_analysis(df, [DataType("v")]).metric(DataType("v")).value
    assert value["counts"] == {
        "Unknown": 1,
        "Fractional": 2,
        "Integral": 3,
        "Boolean": 1,
        "String": 1,
    }
    assert value["ratios"]["Integral"] == pytest.approx(3 / 8)
    assert value["inferred_type"] == "String"


@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        ([("1",), ("2",), (None,)], "Integral"),
        ([("1",), ("2.5",)], "Fractional"),
        ([("true",), ("false",)], "Boolean"),
        ([("true",), ("1",)], "String"),
        ([(None,), (None,)], "Unknown"),
    ],
)
def test_inferred_type_follows_deequ(make_df, rows, expected) -> None:
    df = make_df(rows, "v string")
    assert (
        run_analysis(df, [DataType("v")]).metric(DataType("v")).value["inferred_type"] == expected
    )


def test_native_types_and_where(make_df) -> None:
    df = make_df([(1, True, 1.5), (2, None, None), (3, False, 2.0)], "i int, b boolean, d double")
    analyzers = [DataType("i"), DataType("b"), DataType("d"), DataType("i", where="i > 1")]
    result = run_analysis(df, analyzers)
    assert result.metric(DataType("i")).value["counts"]["Integral"] == 3
    assert result.metric(DataType("b")).value["counts"] == {
        "Unknown": 1,
        "Fractional": 0,
        "Integral": 0,
        "Boolean": 2,
        "String": 0,
    }
    assert result.metric(DataType("d")).value["inferred_type"] == "Fractional"
    assert sum(result.metric(DataType("i", where="i > 1")).value["counts"].values()) == 2


def test_empty_input_and_missing_column(make_df) -> None:
    df = make_df([], "v string")
    result = run_analysis(df, [DataType("v"), DataType("w"), Size()])
    assert "Empty state" in result.metric(DataType("v")).error
    assert "does not exist" in result.metric(DataType("w")).error
    assert result.metric(Size()).value == 0.0
