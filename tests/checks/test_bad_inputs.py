"""Bad inputs among good checks, in one run (issue 29): each gives its documented answer (an
ERROR naming the cause and the thing, or a documented behaviour) and the good checks still run
and are recorded. Also the bounds of a run with wide failing rows (checkers.sample_limits)."""

from __future__ import annotations

import datetime as dt
import http.server
import json
import socket

import pyarrow as pa
import pytest
import sqlalchemy as sa
from pyarrow import parquet
from pyspark.sql import functions as F

from alerting import EscalationPolicy, FailingRowsLog
from alerting.model import Notification
from alerting.receivers import FileReceiver
from alerting.receivers.email import build_email
from alerting.receivers.pagerduty import pagerduty_event
from alerting.receivers.slack import slack_calls
from alerting.tables import incidents, notifications, runs
from checkers import (
    AlertLevel,
    ConsistencyChecker,
    KnownBroken,
    PredicateSingleDatasetChecker,
    Status,
)
from checkers.parsers import CallableParser, CsvParser, ParquetParser
from checkers.parsers.http import HttpJsonParser
from checkers.parsers.jdbc import JdbcParser
from checkers.sample_limits import CELL_CHARS, FILE_BYTES, FILE_CELL_CHARS, SAMPLE_BYTES
from checks import QualityCheck
from checks.registry import discover_all
from scheduling.runner import run_checks
from scheduling.schema import project_database
from scheduling.settings import Settings
from tests.http_stub import Reply, http_stub

pytestmark = pytest.mark.slow  # one run of ~25 checks over eight kinds of source

T0 = dt.datetime(2026, 11, 22, 7, 0, tzinfo=dt.UTC)
PG = "postgresql+psycopg://postgres@127.0.0.1:5432"
MARIA = "mysql+pymysql://root@127.0.0.1:3306"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _login_page(request: http.server.BaseHTTPRequestHandler) -> Reply:
    code = 500 if request.path.startswith("/broken") else 200
    return Reply(code, b"<html><body>login</body></html>", "text/html; charset=utf-8")


@pytest.fixture(scope="module")
def html_server():
    with http_stub(_login_page) as url:
        yield url


def _flights(spark):
    rows = [("N1", 1), (None, 2), (None, 3), ("N4", -4)]
    return spark.createDataFrame(rows, "tailnum string, delay int")


def _wide(spark):
    columns = [F.repeat(F.lit("x"), 1000).alias(f"c{i:03}") for i in range(400)]
    return spark.range(60).select("id", *columns)


def _check(name, parser, checker, **attributes):
    body = {"name": name, "parser": parser, "checker": checker, **attributes}
    return type(name.title().replace("_", ""), (QualityCheck,), body, register=False)


def _predicate(predicate, **options):
    def checker(self, data):
        return PredicateSingleDatasetChecker(data, predicate, **options)

    return checker


def _huge(spark):
    """One failing row whose cell holds 2 MB."""
    return spark.range(1).select("id", F.repeat(F.lit("y"), 2_000_000).alias("blob"))


def _wide_checker(self, data):
    found = PredicateSingleDatasetChecker(data, "id < 0", key="id")
    found.sample_size = 60
    return found


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("bad_inputs")
    (root / "pq/day=7").mkdir(parents=True)
    parquet.write_table(pa.table({"day": [1], "v": ["a"]}), root / "pq/day=7/a.parquet")
    for day, amount in ((1, [10]), (2, ["ten"])):
        (root / f"typed/day={day}").mkdir(parents=True)
        parquet.write_table(pa.table({"amount": amount}), root / f"typed/day={day}/a.parquet")
    (root / "csv/day=7").mkdir(parents=True)
    (root / "csv/day=7/a.csv").write_text("day,v\n1,a\n")
    (root / "rows.csv").write_text("id,email\n1,a@example.com\n\n2x,b@example.com\n3,c\n")
    return root


def _cases(files, web):
    flights = CallableParser(_flights)
    return {
        # good checks, run and recorded beside the bad ones
        "good_passes": _check("good_passes", flights, _predicate("delay > -100")),
        "good_fails": _check("good_fails", flights, _predicate("delay > 0", key="tailnum")),
        # Python predicates must answer True or False
        "says_yes": _check("says_yes", flights, _predicate(lambda r: "yes")),
        "says_nan": _check("says_nan", flights, _predicate(lambda r: float("nan"))),
        "says_one": _check("says_one", flights, _predicate(lambda r: 1)),
        "says_none": _check("says_none", flights, _predicate(lambda r: None)),
        "numpy_bool": _check("numpy_bool", flights, _predicate(lambda r: r["delay"] > 0)),
        # NULL keys excused only explicitly
        "null_keys_excused": _check(
            "null_keys_excused",
            flights,
            _predicate("tailnum IS NOT NULL", key="tailnum"),
            tolerance=KnownBroken(nulls=True, columns="tailnum"),
        ),
        # a partition directory with a data column's name
        "shadow_parquet": _check(
            "shadow_parquet", ParquetParser(str(files / "pq")), _predicate("v IS NOT NULL")
        ),
        "shadow_csv": _check(
            "shadow_csv", CsvParser(str(files / "csv")), _predicate("v IS NOT NULL")
        ),
        # a malformed CSV row: its file and line, never its values
        "csv_bad_row": _check(
            "csv_bad_row",
            CsvParser(str(files / "rows.csv"), schema="id int, email string"),
            _predicate("id > 0"),
        ),
        # partitions whose files disagree on a column's type
        "partition_types": _check(
            "partition_types", ParquetParser(str(files / "typed")), _predicate("amount > 0")
        ),
        # JDBC: the cause, not "Couldn't connect"
        "pg_refused": _check(
            "pg_refused",
            JdbcParser(f"postgresql+psycopg://postgres@127.0.0.1:{_free_port()}/test", table="t"),
            _predicate("true"),
        ),
        "pg_no_database": _check(
            "pg_no_database", JdbcParser(f"{PG}/no_such_db", table="t"), _predicate("true")
        ),
        "pg_no_user": _check(
            "pg_no_user",
            JdbcParser("postgresql+psycopg://no_such_role@127.0.0.1:5432/test", table="t"),
            _predicate("true"),
        ),
        "pg_no_table": _check(
            "pg_no_table", JdbcParser(f"{PG}/test", table="no_such_table"), _predicate("true")
        ),
        "maria_denied": _check(
            "maria_denied",
            JdbcParser(f"{MARIA}/test", table="t", password_env="DQ_TEST_WRONG_PASSWORD"),
            _predicate("true"),
        ),
        "maria_no_table": _check(
            "maria_no_table", JdbcParser(f"{MARIA}/test", table="no_such_table"), _predicate("true")
        ),
        "maria_no_database": _check(
            "maria_no_database", JdbcParser(f"{MARIA}/no_such_db", table="t"), _predicate("true")
        ),
        # HTTP: the port kept, the content type said
        "html_not_json": _check("html_not_json", HttpJsonParser(f"{web}/v1"), _predicate("true")),
        "http_500": _check("http_500", HttpJsonParser(f"{web}/broken"), _predicate("true")),
        # a float key across stores: floats are equal only within a tolerance, never as keys
        "float_key": _check(
            "float_key",
            flights,
            lambda self, data: ConsistencyChecker(
                *[data.withColumn("delay", F.col("delay").cast("double"))] * 2,
                key=("tailnum", "delay"),
            ),
        ),
        # checker() forgot to return
        "forgot_return": _check("forgot_return", flights, lambda self, data: None),
        # bounded samples
        "wide_rows": _check("wide_rows", CallableParser(_wide), _wide_checker),
        "huge_value": _check("huge_value", CallableParser(_huge), _predicate("id < 0", key="id")),
        "infinite": _check(
            "infinite",
            CallableParser(lambda s: s.sql("SELECT double('inf') AS x, 1 AS id")),
            _predicate("x < 0", key="id"),
        ),
    }


@pytest.fixture(scope="module")
def run(spark, files, html_server, tmp_path_factory):
    state = tmp_path_factory.mktemp("bad_inputs_state")
    engine = project_database(f"sqlite:///{state / 'dq.db'}")
    settings = Settings(
        engine,
        {"file": FileReceiver("file", state / "alerts.jsonl")},
        EscalationPolicy(routes={"file": AlertLevel.WARNING}),
        failing_rows=FailingRowsLog(state / "failing"),
    )
    cases = _cases(files, html_server)
    found = discover_all("tests.checks.stops_midway")
    problems = found.problems
    cases.update(found.checks)
    mp = pytest.MonkeyPatch()
    mp.setenv("DQ_TEST_WRONG_PASSWORD", "wrong")
    try:
        report = run_checks(
            list(cases.values()), now=T0, settings=settings, spark=spark, problems=problems
        )
    finally:
        mp.undo()
    with engine.connect() as connection:
        stored = dict(connection.execute(sa.select(runs.c.check_name, runs.c.outcome)).all())
    engine.dispose()
    outcomes = {o.check: o for o in report.outcomes}
    return outcomes, stored, state


ERRORS = {
    "says_yes": "must return True or False, it returned 'yes' (str)",
    "says_nan": "it returned nan (float)",
    "says_one": "it returned 1 (int)",
    "says_none": "it returned None (NoneType)",
    "shadow_parquet": "the partition directory 'day=7' has the name of the column 'day'",
    "shadow_csv": "the partition directory 'day=7' has the name of the column 'day'",
    "csv_bad_row": "rows.csv is malformed at ",
    "partition_types": "the partitions disagree on column 'amount': partition day=",
    "pg_refused": "connection refused at 127.0.0.1:",
    "pg_no_database": "database no_such_db does not exist",
    "pg_no_user": "access denied for user no_such_role",
    "pg_no_table": "no table no_such_table",
    "maria_denied": "access denied for user root",
    "maria_no_database": "database no_such_db does not exist",
    "maria_no_table": "no table test.no_such_table",
    "float_key": "floats are equal within a tolerance; key on integers, text, decimals, dates or "
    "timestamps, or read both sides into Spark and join them with PredicateDoubleDatasetsChecker",
    "html_not_json": "did not return JSON (Content-Type: text/html; charset=utf-8)",
    "http_500": "answered HTTP 500",
    "forgot_return": "checker() returned NoneType None (a `return` missing",
    "midway_broken": "ZeroDivisionError",
    "midway_after": "not loaded (line 28): the module stopped importing at line 22",
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_each_bad_input_is_an_error_naming_its_cause(run, name):
    outcomes, stored, _ = run
    outcome = outcomes[name]
    assert outcome.status is Status.ERROR, outcome.summary()
    assert ERRORS[name] in outcome.error, outcome.error
    assert name in stored  # recorded, alerted like any outcome


def test_a_malformed_csv_row_is_named_by_file_and_line_not_by_its_values(run, files):
    outcomes, stored, _ = run
    error = outcomes["csv_bad_row"].error
    assert f"rows.csv is malformed at {files / 'rows.csv'}, line 4: " in error, error
    assert "b@example.com" not in stored["csv_bad_row"] and "2x" not in error


def test_the_port_of_an_http_source_is_kept(run, html_server):
    outcomes, _, _ = run
    assert html_server in outcomes["http_500"].error


def test_the_good_checks_run_and_are_recorded(run):
    outcomes, stored, _ = run
    assert outcomes["good_passes"].status is Status.PASSED
    assert outcomes["midway_first"].status is Status.PASSED
    assert outcomes["numpy_bool"].status is Status.FAILED and outcomes["numpy_bool"].failing == 1
    failing = outcomes["good_fails"]
    assert failing.status is Status.FAILED and failing.failing == 1
    assert {"good_passes", "good_fails", "midway_first"} <= set(stored)
    assert outcomes["midway_after"].owner == "team-orders"


def test_null_keys_are_excused_only_when_asked(run):
    outcomes, _, _ = run
    excused = outcomes["null_keys_excused"]
    assert excused.status is Status.TOLERATED and (excused.failing, excused.unexcused) == (2, 0)
    with pytest.raises(ValueError, match=r"write KnownBroken\(nulls=True"):
        KnownBroken([None], columns="tailnum")
    with pytest.raises(ValueError, match="cannot hold None"):
        KnownBroken([("AA", None)], columns=("carrier", "tailnum"))


def test_wide_failing_rows_are_bounded_everywhere(run):
    outcomes, stored, state = run
    assert outcomes["wide_rows"].status is Status.FAILED
    record = stored["wide_rows"]
    sizes = {k: len(json.dumps(v)) for k, v in json.loads(record).items()}
    assert len(record.encode()) < SAMPLE_BYTES + 16_384, sizes
    assert len(record.encode()) < SAMPLE_BYTES + 16_384  # the sample and the rest of the outcome
    sample = json.loads(record)["sample"]
    assert sample[-1]["…"].endswith(("more rows", "more columns"))
    assert all(
        len(v) <= CELL_CHARS + 40 for row in sample for v in row.values() if isinstance(v, str)
    )
    alerts = [json.loads(line) for line in (state / "alerts.jsonl").read_text().splitlines()]
    [wide] = [a for a in alerts if a["outcome"]["check"] == "wide_rows"]
    assert len(json.dumps(wide)) < SAMPLE_BYTES + 16_384
    [written] = (state / "failing" / "wide_rows").iterdir()
    assert written.stat().st_size <= FILE_BYTES + 1_000
    lines = written.read_text().splitlines()
    assert len(json.loads(lines[0])["c000"]) == 1000  # the file keeps whole cells


def test_json_files_hold_no_infinity(run):
    _, stored, state = run
    files = [state / "alerts.jsonl", *(state / "failing").rglob("*.jsonl")]
    for line in (line for f in files for line in f.read_text().splitlines()):
        json.loads(line, parse_constant=_refuse)
    assert json.loads(stored["infinite"], parse_constant=_refuse)["sample"] == [
        {"id": 1, "x": "Infinity"}
    ]
    [written] = (state / "failing" / "infinite").iterdir()
    assert json.loads(written.read_text(), parse_constant=_refuse) == {"id": 1, "x": "Infinity"}


def _refuse(constant: str) -> None:
    raise ValueError(f"not JSON: {constant}")


def _recorded(state, check):
    """What the project database holds of `check` beside dq_runs: its incidents' last outcomes
    and its notifications' payloads."""
    engine = sa.create_engine(f"sqlite:///{state / 'dq.db'}")
    try:
        with engine.connect() as connection:
            mine = incidents.c.check_name == check
            last = connection.execute(sa.select(incidents.c.last_outcome).where(mine)).scalars()
            sent = connection.execute(
                sa.select(notifications.c.payload)
                .join(incidents, notifications.c.incident_id == incidents.c.id)
                .where(mine)
            ).scalars()
            return list(last), list(sent)
    finally:
        engine.dispose()


@pytest.mark.parametrize("check", ["wide_rows", "huge_value", "infinite"])
def test_the_database_and_every_notification_payload_are_bounded_and_json(run, check):
    """Each incident's outcome, each queued notification and what Slack, mail and PagerDuty
    would be sent for it stay within the stored outcome's bound, as valid JSON."""
    _, _, state = run
    last, sent = _recorded(state, check)
    assert last and sent
    bound = SAMPLE_BYTES + 16_384  # the sample and the rest of the outcome
    for text in [*last, *sent]:
        assert len(text.encode()) < bound
        json.loads(text, parse_constant=_refuse)
    for payload in sent:
        notice = Notification.from_json(payload)
        slack = json.dumps([call.__dict__ for call in slack_calls(notice, {}, "C0DQ")])
        mail = build_email(
            notice, sender="dq@example.com", recipients=["a@example.com"], domain="x"
        )
        page = json.dumps(pagerduty_event(notice, "ROUTINGKEY"), allow_nan=False)
        for size in (len(slack.encode()), len(mail.as_bytes()), len(page.encode())):
            assert size < bound, (check, size)


def test_a_2_mb_value_is_cut_in_the_outcome_and_in_the_failing_rows_file(run):
    outcomes, stored, state = run
    assert outcomes["huge_value"].status is Status.FAILED
    record = stored["huge_value"]
    [row] = json.loads(record)["sample"]
    assert row["blob"] == "y" * CELL_CHARS + f"… ({2_000_000 - CELL_CHARS:,} more characters)"
    assert len(record.encode()) < 4_096
    [written] = (state / "failing" / "huge_value").iterdir()
    [kept] = [json.loads(line) for line in written.read_text().splitlines()]
    assert kept["blob"].startswith("y" * FILE_CELL_CHARS + "… (")
    assert written.stat().st_size < FILE_CELL_CHARS + 1_000
