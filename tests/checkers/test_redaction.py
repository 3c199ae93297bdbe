"""Redaction of data values in error text (real Spark errors are covered end to end in
tests/checks/test_error_masking.py and tests/checkers/test_pii_in_logs.py)."""

from __future__ import annotations

from checkers.redaction import redact_records, redact_values


def test_record_dumps_are_withheld_even_over_several_lines():
    text = (
        "[MALFORMED_RECORD_IN_PARSING.WITHOUT_SUGGESTION] Malformed records are detected in "
        'record parsing: [2,"ann\nlee@example.com",null].\nParse Mode: FAILFAST.\n'
        'Caused by: [MALFORMED_CSV_RECORD] Malformed CSV record: 2,"ann\nlee@example.com,4'
        " SQLSTATE: KD000\n"
        'Caused by: java.lang.NumberFormatException: For input string: "ann"\n'
        'JsonParseException: at [Source: (String)"{"e": "lee@example.com"; line: 1, column: 9]'
    )
    redacted = redact_records(text)
    assert "lee@example.com" not in redacted and '"ann"' not in redacted
    assert redacted.count("<record withheld>") == 3 and "Parse Mode: FAILFAST" in redacted
    assert "SQLSTATE: KD000" in redacted and "line: 1, column: 9" in redacted


def test_values_are_withheld_but_types_settings_and_wording_stay():
    text = (
        "ValueError: cannot check 'O'Brien' nor \"SMITH\"; it can't be cast to \"DECIMAL(4, 2)\""
        ' or "ARRAY<STRING>"; set "spark.sql.ansi.enabled" to "false"'
    )
    assert redact_values(text) == (
        'ValueError: cannot check \'***\' nor "***"; it can\'t be cast to "DECIMAL(4, 2)"'
        ' or "ARRAY<STRING>"; set "spark.sql.ansi.enabled" to "false"'
    )
