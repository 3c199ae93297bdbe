"""tests.checks.broken_checks as a team would run it: every problem its checks should report
(by check name), what its good checks end as, and `dq` in a subprocess over it with a SQLite
project database (tests/scheduling/test_isolation.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from checkers.outcome import Status

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "tests.checks.broken_checks"

#: Problems found when the package is imported (no data needed): check name -> reason fragment.
DEFINITION_PROBLEMS = {
    "clock_as_string": "clock is a string; wrap it: clock = Cron('0 * * * *')",
    "missing_parser": "needs a `parser`",
    "missing_checker": "needs a `checker(self, data)` method",
    "bad_name": "name 'Orders Check!': use lowercase letters",
    "tolerance_as_number": "for 'fewer than 3 failing' write LessThan(3)",
    "alert_level_as_level": "alert_level = FixedLevel(AlertLevel.WARNING)",
    "error_level_as_text": "error_level = AlertLevel.CRITICAL",
    "escalation_as_dict": "escalation must be an EscalationPolicy",
    "tags_as_string": "tags = ('payments',)",
    "masked_columns_as_string": "masked_columns = ('email',)",
    "negative_sample_size": "sample_size must be a whole number >= 0",
    "parser_as_string": "parser is a string; wrap it in a Parser",
    "parser_dict_of_strings": "parser as a dict maps names to Parsers",
    "owner_as_list": "owner must be a string",
    "bad_cron": "invalid cron expression 'every hour': use five fields",
    # never defined (the module stopped in BadCron's body): an ERROR of its own, not silence
    "after_bad_cron": "not loaded (line 29): the module stopped importing at line 20: ValueError",
    "unknown_time_zone": "unknown time zone 'Mars/Olympus'",
    "misordered_thresholds": "warning=100, error=10; swap them",
    "share_as_percent": "ShareAtMost needs 0 <= share <= 1 (a fraction: 0.05 is 5%)",
    "less_than_text": "LessThan counts failing elements: n must be a whole number",
    "known_broken_string": "write KnownBroken(['N123'])",
    "every_seconds": "Every needs a datetime.timedelta",
    "tolerance_and_number": "tolerances combine with tolerances",
    f"{PACKAGE}.team_copy.CopiedAmounts": (
        f"two checks are named 'good_amounts': {PACKAGE}.healthy.GoodAmounts and "
        f"{PACKAGE}.team_copy.CopiedAmounts"
    ),
    f"module:{PACKAGE}.missing_dependency": "No module named 'dq_not_installed_anywhere'",
    f"module:{PACKAGE}.module_name_error": "NameError: name 'ORDRES' is not defined",
    f"module:{PACKAGE}.syntax_error": "SyntaxError: ",
}
#: Problems found when the checks run: check name -> reason fragment.
RUN_PROBLEMS = {
    "checker_raises": "building the checker failed: AttributeError",
    "checker_returns_text": "checker() returned str 'amount >= 0', not a Checker",
    "parser_method_raises": "building the sources failed: KeyError: 'order'",
    "parser_method_returns_path": "parser() returned 'lake/orders/20261122'",
    "known_broken_without_key": "configuration error: KnownBroken needs key columns",
    "known_broken_on_metrics": "configuration error: KnownBroken keys do not apply to metric",
    "known_broken_missing_column": (
        "configuration error: KnownBroken key column 'order_key' is not a column of the data "
        "(columns: id, amount, a.b)"
    ),
    "key_missing_column": (
        "configuration error: key column 'order_id' is not a column of the data "
        "(columns: id, amount, a.b)"
    ),
    "dotted_key_missing": "key column 'a.c' is not a column of the data",
    "join_key_missing": "join key column 'order_id' is not a column of left",
    "predicate_on_missing_column": "price",
}
GOOD = {
    "good_amounts": Status.PASSED,
    "good_dotted_key": Status.FAILED,
    "good_known_broken_dotted_key": Status.TOLERATED,
    "definitions_neighbour": Status.PASSED,
    "before_bad_cron": Status.PASSED,
}


def package_env(tmp_path: Path) -> dict[str, str]:
    """The environment `dq` runs the package in: its database, state and (no) dq.toml."""
    return {
        "DQ_CHECKS": PACKAGE,
        "DQ_DATABASE_URL": f"sqlite:///{tmp_path / 'dq.db'}",
        "DQ_STATE_DIR": str(tmp_path / "state"),
        "DQ_CONFIG": str(tmp_path / "none.toml"),
    }


def dq(*args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(
        [sys.executable, "-m", "scheduling.cli", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def alerts_by_check(state: Path) -> dict[str, list[dict[str, object]]]:
    by_check: dict[str, list[dict[str, object]]] = {}
    for line in (state / "alerts.jsonl").read_text().splitlines():
        record = json.loads(line)
        by_check.setdefault(record["outcome"]["check"], []).append(record)
    return by_check
