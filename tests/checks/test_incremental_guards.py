"""What keeps incremental checks honest: refusals when a check cannot be incremental, scopes,
recovery from a crash between states and fingerprint, a read-only database, PostgreSQL and
MariaDB stores, and the drift guard (`dq run --full`) catching corrupted stored states."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

import pytest
import sqlalchemy as sa

from checkers import (
    MetricChecker,
    OffsetPredicateSingleDatasetChecker,
    PredicateDoubleDatasetsChecker,
    PredicateSingleDatasetChecker,
)
from checkers.engine_tables import partition_states
from checkers.metrics import Check, CheckLevel
from checkers.outcome import Status
from checkers.parsers import HivePartitions, ParquetParser
from checks import QualityCheck
from checks.definition import CheckDefinitionError
from checks.incremental import Incremental
from scheduling.cli import main
from scheduling.cli.exits import EXIT_DRIFT, EXIT_FAILED
from scheduling.drift import differences
from scheduling.tick.evaluate import evaluate_checks
from scheduling.tick.partition_store import PartitionStore
from tests.checks.test_incremental import DAYS, NOW, flights_by_day  # noqa: F401
from tests.incremental_helpers import partition_store, write_day
from tests.scheduling.databases import KINDS, fresh_database

PARTITIONED = ParquetParser("lake", partitioning=HivePartitions(("day",)))


@pytest.fixture
def lake(tmp_path, flights_by_day):  # noqa: F811
    root = tmp_path / "lake"
    for day in DAYS[:3]:
        write_day(root, day, flights_by_day[day])
    return root


def _delays(root, **options):
    class Delays(QualityCheck, register=False):
        name = "delays"
        parser = ParquetParser(str(root), partitioning=HivePartitions(("day",)))
        incremental = Incremental(**options)

        def checker(self, flights):
            return PredicateSingleDatasetChecker(flights, "dep_delay IS NULL OR dep_delay < 120")

    return Delays


def test_checks_that_cannot_be_incremental_are_refused_when_defined():
    def define(body: dict) -> None:
        type("Bad", (QualityCheck,), {"__module__": __name__, **body}, register=False)

    def check_method(self, data) -> PredicateDoubleDatasetsChecker:  # the annotation says it
        raise AssertionError("never called at definition")

    cases = {
        "one partitioned source": {"parser": {"a": PARTITIONED, "b": PARTITIONED}},
        "needs a partitioned source": {"parser": ParquetParser("lake")},
        "joins two datasets": {"parser": PARTITIONED, "checker": check_method},
    }
    for message, body in cases.items():
        body = {"checker": lambda self, d: None, "incremental": Incremental(), **body}
        with pytest.raises(CheckDefinitionError, match=message):
            define(body)
    with pytest.raises(CheckDefinitionError, match=r"write incremental = Incremental\(\)"):
        define({"parser": PARTITIONED, "checker": lambda s, d: None, "incremental": True})
    with pytest.raises(ValueError, match="not both"):
        Incremental(last=3, within=dt.timedelta(days=1))
    with pytest.raises(ValueError, match="whole number >= 1"):
        Incremental(last=0)


def test_checkers_that_cannot_merge_over_partitions_are_a_configuration_error(
    spark, lake, tmp_path
):
    source = ParquetParser(str(lake), partitioning=HivePartitions(("day",)))

    class Unaligned(QualityCheck, register=False):
        incremental = Incremental()
        parser = source

        def checker(self, flights):
            return OffsetPredicateSingleDatasetChecker(
                flights,
                "previous.dep_time <= current.dep_time",
                order_by=["time_hour"],
                partition_by=["tailnum"],
            )

    class Joined(QualityCheck, register=False):
        incremental = Incremental()
        parser = source

        def checker(self, flights):  # no annotation: found when the checker is built
            return PredicateDoubleDatasetsChecker(flights, flights, on="flight")

    class Narrowed(QualityCheck, register=False):
        incremental = Incremental()
        parser = source

        def checker(self, flights):
            return PredicateSingleDatasetChecker(flights.select("dep_delay"), "dep_delay < 1")

    class Modelled(QualityCheck, register=False):
        incremental = Incremental()
        parser = source

        def checker(self, flights):  # a model is scored on the whole dataset, not per day
            return MetricChecker(
                flights,
                [
                    Check(CheckLevel.ERROR, "m")
                    .is_complete("carrier")
                    .has_predictability("carrier", ["tailnum"], lambda f1: f1 > 0.5)
                ],
            )

    store = partition_store(tmp_path)
    outcomes = evaluate_checks(
        [Unaligned, Joined, Narrowed, Modelled], spark=spark, now=NOW, partitions=store
    )
    assert [o.status for o in outcomes] == [Status.ERROR] * 4
    assert "partition_by to include the partition columns ['day']" in outcomes[0].error
    assert "joins two datasets" in outcomes[1].error
    assert "__dq_partition" in outcomes[2].error
    assert "Predictability(column='carrier'" in outcomes[3].error
    assert "keeps no state per partition" in outcomes[3].error
    assert all(o.error.startswith("configuration error: ") for o in outcomes)
    assert store.known("unaligned") == {}  # nothing stored for a check that cannot run


def test_scopes_last_and_within(spark, lake, tmp_path, flights_by_day):  # noqa: F811
    store = partition_store(tmp_path)
    last_two = _delays(lake, last=2)
    outcome = evaluate_checks([last_two], spark=spark, now=NOW, partitions=store)[0]
    assert outcome.total == sum(len(flights_by_day[d]) for d in DAYS[1:3])
    write_day(lake, DAYS[3], flights_by_day[DAYS[3]])
    outcome = evaluate_checks([last_two], spark=spark, now=NOW, partitions=store)[0]
    assert outcome.total == sum(len(flights_by_day[d]) for d in DAYS[2:4])
    assert outcome.reading == {
        "rows_read": len(flights_by_day[DAYS[3]]),
        "partitions_read": 1,
        "partitions": 2,
    }
    assert set(store.known("delays")) == {"day=2013-01-03", "day=2013-01-04"}  # left scope: gone

    within = _delays(lake, within=dt.timedelta(days=2))
    at = dt.datetime(2013, 1, 4, 6, tzinfo=dt.UTC)  # day 4 is after the run: not yet in scope
    outcome = evaluate_checks([within], spark=spark, now=at, partitions=store)[0]
    assert outcome.total == sum(len(flights_by_day[d]) for d in DAYS[2:4])
    assert outcome.reading["partitions"] == 2


def test_states_without_a_fingerprint_or_with_a_lost_table_are_computed_again(
    spark, lake, tmp_path
):
    from checkers.metrics import Uniqueness

    Unique = _unique_check(lake)
    store = partition_store(tmp_path)
    first = evaluate_checks([Unique], spark=spark, now=NOW, partitions=store)[0]
    # A crash after the states and before the fingerprint: the partition is unknown again.
    with store.engine.begin() as connection:
        connection.exec_driver_sql(
            "DELETE FROM dq_partitions WHERE partition_key = 'day=2013-01-02'"
        )
    # A frequency table lost on disk (a wiped state directory).
    known = store.load("unique_flights", ["day=2013-01-03"], [Uniqueness(("carrier", "flight"))])
    table = next(iter(known["day=2013-01-03"].values())).payload["location"]
    import shutil

    shutil.rmtree(table)
    again = evaluate_checks([Unique], spark=spark, now=NOW, partitions=store)[0]
    assert again.reading["partitions_read"] == 2
    assert differences(first, again) == []
    scratch = evaluate_checks([Unique], spark=spark, now=NOW, full=True)[0]
    assert differences(again, scratch) == []


def test_a_read_only_database_gives_an_error_and_commits_nothing(spark, lake, tmp_path):
    url = f"sqlite:///{tmp_path / 'dq.db'}"
    partition_store(tmp_path, url)  # the schema exists
    read_only = sa.create_engine(f"sqlite:///file:{tmp_path / 'dq.db'}?mode=ro&uri=true")
    check = _delays(lake)
    store = PartitionStore(read_only, tmp_path / "states")
    outcome = evaluate_checks([check], spark=spark, now=NOW, partitions=store)[0]
    assert outcome.status is Status.ERROR
    assert "storing the states of delays's partitions failed" in outcome.error
    assert "readonly" in outcome.error.replace("-", "")
    writable = partition_store(tmp_path, url)
    outcome = evaluate_checks([check], spark=spark, now=NOW, partitions=writable)[0]
    assert outcome.error is None and outcome.reading["partitions_read"] == 3


@pytest.mark.parametrize("kind", KINDS)
def test_the_store_on_every_project_database(spark, lake, tmp_path, flights_by_day, kind):  # noqa: F811
    check = _delays(lake)
    with fresh_database(kind, tmp_path) as url:
        store = partition_store(tmp_path, url)
        evaluate_checks([check], spark=spark, now=NOW, partitions=store)
        write_day(lake, DAYS[3], flights_by_day[DAYS[3]])
        outcome = evaluate_checks([check], spark=spark, now=NOW, partitions=store)[0]
        assert outcome.reading["partitions_read"] == 1
        scratch = evaluate_checks([check], spark=spark, now=NOW, full=True)[0]
        assert differences(outcome, scratch) == []
        assert len(store.known("delays")) == 4
        store.engine.dispose()


def test_dq_run_full_reports_drift_and_the_next_run_heals(
    spark, lake, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("DQ_INC_LAKE", str(lake))
    monkeypatch.setenv("DQ_CHECKS", "tests.checks.incremental_fixture_checks")
    monkeypatch.setenv("DQ_DATABASE_URL", f"sqlite:///{tmp_path / 'dq.db'}")
    monkeypatch.setenv("DQ_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("DQ_CONFIG", str(tmp_path / "none.toml"))
    assert main(["run", "inc_delays", "--full", "--at", "2013-02-01T00:00:00"]) == EXIT_FAILED
    assert "inc_delays: no drift (incremental = from scratch over 3 partitions" in (
        capsys.readouterr().out
    )
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'dq.db'}")
    with engine.begin() as connection:  # a stored count that no longer matches the data
        rows = connection.execute(sa.select(partition_states)).mappings().all()
        failing = next(r for r in rows if r["analyzer"].endswith(":failing')"))
        payload = json.loads(failing["payload"])
        payload["num_matches"] += 7
        connection.execute(
            partition_states.update()
            .where(partition_states.c.analyzer_digest == failing["analyzer_digest"])
            .where(partition_states.c.partition_key == failing["partition_key"])
            .values(payload=json.dumps(payload))
        )
    assert main(["run", "inc_delays", "--full", "--at", "2013-02-01T01:00:00"]) == EXIT_DRIFT
    out = capsys.readouterr().out
    assert "inc_delays: DRIFT" in out and "failing: incremental" in out
    assert "its stored partitions are forgotten" in out
    with engine.connect() as connection:  # only the partition whose states differ
        assert connection.exec_driver_sql("SELECT count(*) FROM dq_partitions").scalar() == 2
    assert main(["run", "inc_delays", "--full", "--at", "2013-02-01T02:00:00"]) == EXIT_FAILED
    out = capsys.readouterr().out
    assert "inc_delays: no drift" in out
    with engine.connect() as connection:  # read again from the data, stored again
        assert connection.exec_driver_sql("SELECT count(*) FROM dq_partitions").scalar() == 3
    engine.dispose()


def _rewritten_alike(path: Path, frame) -> None:
    """The file rewritten with one more late departure, at its old size and modification time:
    a change no fingerprint sees (the first row whose rewrite keeps the size)."""
    before = path.stat()
    for row in frame.index[frame.dep_delay < 120]:
        changed = frame.copy()
        changed.loc[row, "dep_delay"] = 300.0
        candidate = path.with_suffix(".candidate")
        write_day(path.parent.parent, DAYS[0], changed).rename(candidate)
        path.parent.mkdir(exist_ok=True)
        if candidate.stat().st_size == before.st_size:
            candidate.replace(path)
            os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
            return
        candidate.unlink()
    raise AssertionError("no rewrite keeps the file's size")


def test_a_file_rewritten_alike_is_found_and_only_its_partition_read_again(
    spark,
    lake,
    tmp_path,
    monkeypatch,
    capsys,
    flights_by_day,  # noqa: F811
):
    monkeypatch.setenv("DQ_INC_LAKE", str(lake))
    monkeypatch.setenv("DQ_CHECKS", "tests.checks.incremental_fixture_checks")
    monkeypatch.setenv("DQ_DATABASE_URL", f"sqlite:///{tmp_path / 'dq.db'}")
    monkeypatch.setenv("DQ_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("DQ_CONFIG", str(tmp_path / "none.toml"))
    assert main(["run", "inc_delays", "--at", "2013-02-01T00:00:00"]) == EXIT_FAILED
    (target,) = (lake / f"day={DAYS[0].isoformat()}").glob("*.parquet")
    _rewritten_alike(target, flights_by_day[DAYS[0]])
    capsys.readouterr()
    assert main(["run", "inc_delays", "--full", "--at", "2013-02-01T01:00:00"]) == EXIT_DRIFT
    out = capsys.readouterr().out
    assert "failing: incremental" in out
    assert f"(1 of 3: day={DAYS[0].isoformat()})" in out, out
    assert main(["run", "inc_delays", "--json", "--at", "2013-02-01T02:00:00"]) == EXIT_FAILED
    (outcome,) = json.loads(capsys.readouterr().out)["outcomes"]
    assert outcome["rows_read"] == len(flights_by_day[DAYS[0]])  # the rewritten day alone
    assert outcome["failing"] == 56 + 1  # the first run's 56, and the planted one


def _unique_check(root):
    from checkers.metric_checker import MetricChecker
    from checkers.metrics import Uniqueness
    from checkers.metrics.constraints import MetricConstraint

    class UniqueFlights(QualityCheck, register=False):
        name = "unique_flights"
        parser = ParquetParser(str(root), partitioning=HivePartitions(("day",)))
        incremental = Incremental()

        def checker(self, flights):
            rule = MetricConstraint(Uniqueness(("carrier", "flight")), lambda v: v > 0.9)
            return MetricChecker(flights, [rule])

    return UniqueFlights


def test_two_runs_at_once_both_finish_and_leave_a_consistent_store(spark, lake, tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    store = partition_store(tmp_path, f"sqlite:///{tmp_path / 'dq.db'}?timeout=30")
    check = _unique_check(lake)

    def run(_: int):
        return evaluate_checks([check], spark=spark, now=NOW, partitions=store)[0]

    with ThreadPoolExecutor(2) as pool:
        both = list(pool.map(run, range(2)))
    assert [o.error for o in both] == [None, None]
    assert differences(both[0], both[1]) == []
    after = run(0)
    assert after.reading["partitions_read"] == 0  # the store is whole: nothing to read again
    scratch = evaluate_checks([check], spark=spark, now=NOW, full=True)[0]
    assert differences(after, scratch) == []


def test_unreferenced_frequency_tables_are_deleted_only_once_old(spark, lake, tmp_path):
    import os

    from scheduling.tick.partition_store import TABLE_GRACE_S

    store = partition_store(tmp_path)
    check = _unique_check(lake)
    evaluate_checks([check], spark=spark, now=NOW, partitions=store)
    directory = store.states._partition_dir("unique_flights", "day=2013-01-01")
    (used,) = [p.name for p in directory.iterdir()]
    young, old = directory / "freq-young", directory / "freq-old"
    for orphan in (young, old):  # what a crashed or concurrent run leaves behind
        orphan.mkdir()
    stamp = os.stat(old).st_mtime - TABLE_GRACE_S - 60
    os.utime(old, (stamp, stamp))
    store.forget("unique_flights", [])  # nothing
    with store.engine.begin() as connection:  # the next run must read day 1 again
        connection.exec_driver_sql(
            "DELETE FROM dq_partitions WHERE partition_key = 'day=2013-01-01'"
        )
    evaluate_checks([check], spark=spark, now=NOW, partitions=store)
    names = {p.name for p in directory.iterdir()}
    assert "freq-young" in names and "freq-old" not in names
    assert used in names or len(names) == 2  # the replaced table is young: kept for now


def test_a_metric_checker_with_history_saves_each_new_partition(
    spark,
    lake,
    tmp_path,
    flights_by_day,  # noqa: F811
):
    from checkers.metric_checker import MetricChecker
    from checkers.metrics import (
        Check,
        CheckLevel,
        MetricsRepository,
        RelativeRateOfChange,
        ResultKey,
        Size,
    )
    from checkers.metrics.metric_history import MetricHistory

    repository = MetricsRepository(f"sqlite:///{tmp_path / 'metrics.db'}")

    class Volume(QualityCheck, register=False):
        name = "daily_volume"
        parser = ParquetParser(str(lake), partitioning=HivePartitions(("day",)))
        incremental = Incremental()

        def checker(self, flights):
            history = MetricHistory(repository, ResultKey(self.now), "flights")
            rule = Check(CheckLevel.ERROR, "volume").has_no_anomalies(
                Size(),
                RelativeRateOfChange(max_decrease=0.5),
                per_partition=True,
            )
            return MetricChecker(flights, [rule], history=history)

    store = partition_store(tmp_path)
    evaluate_checks([Volume], spark=spark, now=NOW, partitions=store)
    rows = repository.query(per_partition=True, names=["Size"])
    assert {r.partition_id: r.value for r in rows} == {
        f"day={d.isoformat()}": float(len(flights_by_day[d])) for d in DAYS[:3]
    }
    whole = repository.query(per_partition=False, names=["Size"])
    assert [r.value for r in whole] == [float(sum(len(flights_by_day[d]) for d in DAYS[:3]))]
    write_day(lake, DAYS[3], flights_by_day[DAYS[3]].head(40))  # a day with very few flights
    outcome = evaluate_checks(
        [Volume], spark=spark, now=NOW + dt.timedelta(days=1), partitions=store
    )[0]
    assert outcome.status is Status.FAILED
    assert "day=2013-01-04" in outcome.sample[0]["reason"]


def test_a_sql_source_partitioned_by_a_column_reads_only_changed_days(spark, tmp_path):
    from checkers.parsers import PartitionColumn, SqlQueryParser
    from tests.checkers.test_partitions_sql import statements

    url = f"sqlite:///{tmp_path / 'ops.db'}"
    ops = sa.create_engine(url)
    with ops.begin() as connection:
        connection.exec_driver_sql(
            "CREATE TABLE bookings (id INTEGER, day DATE, amount REAL, updated_at TIMESTAMP)"
        )
        connection.exec_driver_sql(
            "INSERT INTO bookings VALUES "
            + ", ".join(
                f"({i}, '2013-01-0{1 + i % 3}', {i % 7 - 1}, '2013-01-0{1 + i % 3} 10:00:00')"
                for i in range(300)
            )
        )

    class Amounts(QualityCheck, register=False):
        name = "positive_amounts"
        parser = SqlQueryParser(
            url,
            "SELECT id, day, amount, updated_at FROM bookings",
            schema="id int, day date, amount double, updated_at timestamp",
            partitioning=PartitionColumn("day", changed="updated_at"),
        )
        incremental = Incremental()

        def checker(self, bookings):
            return PredicateSingleDatasetChecker(bookings, "amount >= 0", key="id")

    store = partition_store(tmp_path)
    first = evaluate_checks([Amounts], spark=spark, now=NOW, partitions=store)[0]
    assert first.reading == {"rows_read": 300, "partitions_read": 3, "partitions": 3}
    with ops.begin() as connection:  # one booking of day 2 corrected, its change time moved
        connection.exec_driver_sql(
            "UPDATE bookings SET amount = 5, updated_at = '2013-01-05 08:00:00' WHERE id = 7"
        )
    with statements() as sent:
        second = evaluate_checks([Amounts], spark=spark, now=NOW, partitions=store)[0]
    assert second.reading == {"rows_read": 100, "partitions_read": 1, "partitions": 3}
    assert second.failing == first.failing - 1
    reads = [s for s in sent if "FROM bookings" in s and "count(" not in s.lower()]
    assert len(reads) == 1 and "IN" in reads[0]  # the rows of the changed day only
    scratch = evaluate_checks([Amounts], spark=spark, now=NOW, full=True)[0]
    assert differences(second, scratch) == []
    ops.dispose()


def test_the_definition_digest_is_the_same_in_every_process(spark, lake):
    """A parser with a lazy path (a lambda) has an address in its repr: it must not count."""
    from scheduling.tick.digests import definition_digest
    from scheduling.tick.partition_plans import plan_for

    def parser_reading(path: str) -> ParquetParser:
        return ParquetParser(lambda: path, partitioning=HivePartitions(("day",)))

    first, second = parser_reading(str(lake)), parser_reading(str(lake))
    assert first.path is not second.path and "0x" in repr(first)  # two objects, two addresses
    check = _delays(lake)
    plan = plan_for(check, check(now=NOW), first.read_partitions(spark, []), ("day",))
    assert not isinstance(plan, str)
    assert definition_digest(check, first, plan) == definition_digest(check, second, plan)
    elsewhere = parser_reading(str(lake.parent))
    assert definition_digest(check, elsewhere, plan) != definition_digest(check, first, plan)


def test_a_malformed_row_in_a_new_partition_names_its_file_and_line(spark, tmp_path):
    from checkers.parsers import CsvParser

    root = tmp_path / "csv"
    for day, rows in ((1, "1,10\n2,20\n"), (2, "3,30\n")):
        (root / f"day={day}").mkdir(parents=True)
        (root / f"day={day}/a.csv").write_text(f"id,amount\n{rows}")

    class Amounts(QualityCheck, register=False):
        name = "csv_amounts"
        parser = CsvParser(
            str(root), schema="id int, amount int", partitioning=HivePartitions(("day",))
        )
        incremental = Incremental()

        def checker(self, rows):
            return PredicateSingleDatasetChecker(rows, "amount > 0", key="id")

    store = partition_store(tmp_path, f"sqlite:///{tmp_path / 'dq.db'}")
    first = evaluate_checks([Amounts], spark=spark, now=NOW, partitions=store)[0]
    assert first.status is Status.PASSED, first.summary()
    (root / "day=3").mkdir()
    (root / "day=3/a.csv").write_text("id,amount\n4,40\n5,fifty\n")
    second = evaluate_checks([Amounts], spark=spark, now=NOW, partitions=store)[0]
    assert second.status is Status.ERROR
    assert f"is malformed at {root}/day=3/a.csv, line 3: " in (second.error or ""), second.error
    assert "fifty" not in (second.error or "")


TEAM_MODULE = '''
from checkers import PredicateSingleDatasetChecker
from checkers.parsers import HivePartitions, ParquetParser
from checks import QualityCheck
from checks.incremental import Incremental


class Delays(QualityCheck, register=False):
    name = "team_delays"
    parser = ParquetParser(LAKE, partitioning=HivePartitions(("day",)))
    incremental = Incremental()

    def checker(self, flights):
        return PredicateSingleDatasetChecker(flights, "dep_delay IS NULL OR dep_delay < 120")
'''


def test_a_comment_or_layout_edit_of_the_module_reads_nothing_a_code_edit_reads_all(
    spark, lake, tmp_path, monkeypatch
):
    """The digest is of the module's code: a comment, blank lines or spacing within a line
    keep the stored states; any other change to the module re-reads every partition."""
    import importlib
    import sys

    package = tmp_path / "team"
    package.mkdir()
    module = package / "team_delays_module.py"
    monkeypatch.syspath_prepend(str(package))
    store = partition_store(tmp_path)

    def run(source: str) -> dict[str, int]:
        module.write_text(source.replace("LAKE", repr(str(lake))))
        importlib.invalidate_caches()
        if "team_delays_module" in sys.modules:
            loaded = importlib.reload(sys.modules["team_delays_module"])
        else:
            loaded = importlib.import_module("team_delays_module")
        [result] = evaluate_checks([loaded.Delays], spark=spark, now=NOW, partitions=store)
        return result.reading

    try:
        assert run(TEAM_MODULE)["partitions_read"] == 3
        laid_out = TEAM_MODULE.replace(
            "    def checker(self, flights):",
            "    # flights that left on time\n\n    def checker(self,   flights):  # the frame",
        ).replace('("day",)', '(\n        "day",\n    )')
        assert run(laid_out) == {"rows_read": 0, "partitions_read": 0, "partitions": 3}
        edited = laid_out + "\nNOTE = 'a module-level name, not in the plan'\n"
        assert run(edited)["partitions_read"] == 3
    finally:
        sys.modules.pop("team_delays_module", None)
