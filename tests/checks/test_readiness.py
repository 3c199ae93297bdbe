"""Readiness markers through the real run path (`run_checks` on a real database, real Spark): a
green run writes the marker beside the data, a red one takes it back, a source without files
gets a database row, a marker that cannot be written is reported without losing the outcome;
`guards` and `after` are refused at definition when wrong, and reach the manifest."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
import sqlalchemy as sa

from alerting import EscalationPolicy
from alerting.tables import runs
from checkers import LessThan, PredicateSingleDatasetChecker, Status
from checkers.parsers import CallableParser, CsvParser, ParquetParser, TableParser
from checks import Guarded, QualityCheck
from checks.registry import discover_all
from scheduling.airflow.manifest import build_manifest
from scheduling.runner import RunReport, run_checks
from scheduling.schema import MIGRATIONS, migrate, project_database
from scheduling.settings import Settings
from scheduling.tick.markers import marker_path, read_marker
from scheduling.tick.readiness import is_ready
from scheduling.tick.readiness_table import readiness
from scheduling.windows import Window
from tests.checks.test_registry import HEADER, _check, package  # noqa: F401 (fixture)
from tests.scheduling.databases import KINDS, fresh_database

T0 = dt.datetime(2026, 11, 22, 6, 0, tzinfo=dt.UTC)
QUARTER = dt.timedelta(minutes=15)
PLACES: dict[str, Path] = {}  # where this test's lake and blocked marker directory are
ROWS: list[tuple[int]] = []  # the rows of the source without files


def _positive(self: QualityCheck, data: object) -> PredicateSingleDatasetChecker:
    return PredicateSingleDatasetChecker(data, "n > 0")


class LakeNumbersPositive(QualityCheck, register=False):
    parser = CsvParser(lambda: str(PLACES["lake"]), schema="n int")
    guards = Guarded("lake/numbers")
    tolerance = LessThan(2)
    after = ("producer/numbers", "s3://bucket/numbers")
    checker = _positive  # type: ignore[assignment]


class OpsNumbersPositive(QualityCheck, register=False):
    parser = CallableParser(lambda spark: spark.createDataFrame(ROWS, "n int"), name="ops")
    guards = Guarded()  # no files: the database row is its marker
    checker = _positive  # type: ignore[assignment]


class BlockedNumbersPositive(QualityCheck, register=False):
    parser = CsvParser(lambda: str(PLACES["lake"]), schema="n int")
    guards = Guarded("lake/blocked", marker_dir=lambda: str(PLACES["blocked"]))
    checker = _positive  # type: ignore[assignment]


@pytest.fixture
def lake(tmp_path) -> Path:
    PLACES["lake"] = tmp_path / "lake" / "numbers"
    PLACES["lake"].mkdir(parents=True)
    return PLACES["lake"]


def _settings(url: str, tmp_path: Path) -> Settings:
    return Settings(project_database(url), {}, EscalationPolicy(routes={}), spool_dir=tmp_path)


def _land(lake: Path, *values: int) -> None:
    (lake / "part-0.csv").write_text("n\n" + "".join(f"{v}\n" for v in values))


def _run(settings: Settings, check: type[QualityCheck], n: int, spark: object) -> RunReport:
    """The check's run for the n-th quarter after T0."""
    end = T0 + n * QUARTER
    window = Window(check.name, end - QUARTER, end)
    return run_checks([check], now=end, settings=settings, windows=[window], spark=spark)


def _row(settings: Settings, asset: str) -> dict[str, object]:
    with settings.engine.connect() as connection:
        found = connection.execute(sa.select(readiness).where(readiness.c.asset == asset))
        return dict(found.mappings().one())


def _run_ids(settings: Settings) -> list[int]:
    with settings.engine.connect() as connection:
        return list(connection.execute(sa.select(runs.c.id).order_by(runs.c.id)).scalars())


def test_green_runs_write_the_marker_beside_the_data_and_red_runs_take_it_back(
    spark, lake, tmp_path
):
    settings = _settings(f"sqlite:///{tmp_path / 'dq.db'}", tmp_path / "spool")
    marker = lake / "_SUCCESS"
    _land(lake, 1, 2, 3)
    [ready] = _run(settings, LakeNumbersPositive, 1, spark).readiness
    assert (ready.asset, ready.ready, ready.error, ready.marker) == (
        "lake/numbers",
        True,
        None,
        str(marker),
    )
    content = read_marker(marker)
    assert content == ready.content  # the Airflow asset event's extra
    assert content is not None and content.pop("written_at")
    assert content == {
        "asset": "lake/numbers",
        "check": "lake_numbers_positive",
        "window_start": T0.isoformat(),
        "window_end": (T0 + QUARTER).isoformat(),
        "run_id": _run_ids(settings)[-1],
        "status": "passed",
        "failing": 0,
        "total": 3,
    }
    assert is_ready(settings.engine, "lake/numbers", at=T0 + QUARTER)
    assert not is_ready(settings.engine, "lake/numbers", at=T0 + 2 * QUARTER)

    _land(lake, 1, -2, 3)  # the marker in the directory does not disturb Spark's next read
    report = _run(settings, LakeNumbersPositive, 2, spark)
    assert report.outcomes[0].status is Status.TOLERATED and report.readiness[0].ready
    tolerated = read_marker(marker) or {}
    assert (tolerated["status"], tolerated["failing"], tolerated["total"]) == ("tolerated", 1, 3)
    assert is_ready(settings.engine, "lake/numbers", at=T0 + 2 * QUARTER)

    _land(lake, -1, -2, 3)
    report = _run(settings, LakeNumbersPositive, 3, spark)
    assert report.outcomes[0].status is Status.FAILED
    assert not marker.exists() and not report.readiness[0].ready
    assert report.readiness[0].content is None
    assert _row(settings, "lake/numbers")["status"] == "failed"
    assert not is_ready(settings.engine, "lake/numbers", at=T0 + QUARTER)  # the latest verdict

    _land(lake, 1)
    assert _run(settings, LakeNumbersPositive, 4, spark).readiness[0].ready
    _land(lake)  # no rows: ERROR
    report = _run(settings, LakeNumbersPositive, 5, spark)
    assert report.outcomes[0].status is Status.ERROR
    assert not marker.exists() and not is_ready(settings.engine, "lake/numbers")

    _land(lake, 1)  # a late manual run of an older time changes nothing
    [late] = run_checks([LakeNumbersPositive], now=T0, settings=settings, spark=spark).readiness
    assert late.superseded and not late.ready and not marker.exists()
    assert _row(settings, "lake/numbers")["status"] == "error"


@pytest.mark.parametrize("kind", KINDS)
def test_a_source_without_files_gets_a_readiness_row(spark, tmp_path, kind):
    with fresh_database(kind, tmp_path) as url:
        settings = _settings(url, tmp_path / "spool")
        try:
            ROWS[:] = [(1,), (2,)]
            [ready] = _run(settings, OpsNumbersPositive, 1, spark).readiness
            assert (ready.asset, ready.ready, ready.marker) == ("ops_numbers_positive", True, None)
            assert ready.content is not None and ready.content["total"] == 2
            row = _row(settings, "ops_numbers_positive")
            assert (row["ready"], row["status"], row["run_id"], row["marker"]) == (
                True,
                "passed",
                _run_ids(settings)[-1],
                None,
            )
            assert is_ready(settings.engine, "ops_numbers_positive", at=T0 + QUARTER)

            ROWS[:] = [(-1,)]
            _run(settings, OpsNumbersPositive, 2, spark)
            assert not _row(settings, "ops_numbers_positive")["ready"]
            assert not is_ready(settings.engine, "ops_numbers_positive")
        finally:
            settings.engine.dispose()


def test_a_marker_that_cannot_be_written_is_reported_and_the_outcome_kept(spark, lake, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")  # a directory under a regular file cannot exist, even for root
    PLACES["blocked"] = blocker / "markers"
    settings = _settings(f"sqlite:///{tmp_path / 'dq.db'}", tmp_path / "spool")
    _land(lake, 1, 2)
    report = _run(settings, BlockedNumbersPositive, 1, spark)
    assert report.outcomes[0].status is Status.PASSED and len(_run_ids(settings)) == 1
    [blocked] = report.readiness
    assert not blocked.ready
    assert f"cannot write marker {PLACES['blocked'] / '_SUCCESS'}" in str(blocked.error)
    row = _row(settings, "lake/blocked")
    assert not row["ready"] and row["error"] == blocked.error


def test_a_red_outcome_spooled_while_the_database_is_down_still_removes_the_marker(
    spark, lake, tmp_path
):
    _land(lake, 1)
    up = _settings(f"sqlite:///{tmp_path / 'dq.db'}", tmp_path / "spool")
    _run(up, LakeNumbersPositive, 1, spark)
    assert (lake / "_SUCCESS").exists()
    (tmp_path / "a-file").write_text("")
    down = Settings(
        sa.create_engine(f"sqlite:///{tmp_path / 'a-file' / 'dq.db'}"),
        {},
        EscalationPolicy(routes={}),
        spool_dir=tmp_path / "spool",
    )
    _land(lake, -1, -2)
    report = _run(down, LakeNumbersPositive, 2, spark)
    assert report.spooled and report.outcomes[0].status is Status.FAILED
    assert not (lake / "_SUCCESS").exists() and not report.readiness[0].ready


@pytest.mark.parametrize(
    ("parser", "guards", "expected"),
    [
        (CsvParser("{lake}"), Guarded(), "{lake}/_SUCCESS"),
        (CsvParser("{lake}/part-0.csv"), Guarded(), "{lake}/_part-0.csv_SUCCESS"),
        (ParquetParser("file://{lake}"), Guarded(marker=".ready"), "{lake}/.ready"),
        (CsvParser("{lake}"), Guarded(marker_dir="{lake}/m", marker="_OK"), "{lake}/m/_OK"),
        (CsvParser("{lake}"), Guarded(marker=None), None),
        (ParquetParser("s3a://bucket/numbers"), Guarded(), None),
        (CsvParser("{lake}/*.csv"), Guarded(), None),
        (TableParser("numbers"), Guarded(), None),
        ({"a": CsvParser("{lake}"), "b": CsvParser("{lake}")}, Guarded(), None),
    ],
)
def test_where_the_marker_goes(lake, parser, guards, expected):
    def place(value):
        return value.replace("{lake}", str(lake)) if isinstance(value, str) else value

    if isinstance(parser, dict):
        parser = {k: CsvParser(place(p.path)) for k, p in parser.items()}
    elif not isinstance(parser, TableParser):
        parser = type(parser)(place(parser.path))
    if guards.marker_dir:
        guards = Guarded(marker_dir=place(guards.marker_dir), marker=guards.marker)
    _land(lake, 1)
    check = type("Where", (QualityCheck,), {"parser": parser, "checker": _positive}, register=False)
    assert marker_path(check(now=T0), guards) == (Path(place(expected)) if expected else None)


@pytest.mark.parametrize(
    ("attributes", "message"),
    [
        ('guards = "lake/x"', "guards is a string; wrap it: guards = Guarded('lake/x')"),
        ("guards = True", "write guards = Guarded()"),
        ("guards = 3", "guards must be Guarded(...) or None"),
        ('guards = Guarded("lake//x")', "asset 'lake//x': name the dataset with letters"),
        ('guards = Guarded(marker="SUCCESS")', "a file name starting with _ or ."),
        ('after = "producer/x"', "after = ('producer/x',)"),
        ('after = ("a b",)', "no spaces in an asset name or URI"),
        ('after = ("airflow://x",)', "Airflow reserves the airflow:// scheme"),
        ('name = "own"; guards = Guarded(); after = ("own",)', "it would trigger itself"),
    ],
)
def test_wrong_guards_and_after_are_definition_problems(package, attributes, message):  # noqa: F811
    source = HEADER + "from checks import Guarded\n" + _check("Gate", attributes)
    found = discover_all(package({"gates": source}))
    [problem] = found.problems
    assert problem.name in ("gate", "own") and message in problem.reason
    with pytest.raises(ValueError, match=r"."):  # CheckDefinitionError is a ValueError too
        exec(compile(source, "gates", "exec"), {"__name__": "gates_direct"})


def test_two_checks_guarding_one_asset_are_refused(package):  # noqa: F811
    first = _check("FirstGate", 'guards = Guarded("lake/shared-gate")')
    second = _check("SecondGate", 'guards = Guarded("lake/shared-gate")')
    header = HEADER + "from checks import Guarded\n"
    found = discover_all(package({"first": header + first, "second": header + second}))
    assert list(found.checks) == ["first_gate"]
    [problem] = found.problems
    assert problem.name == "second_gate" and "which " in problem.reason
    assert "first.FirstGate guards already" in problem.reason


def test_the_manifest_names_the_airflow_assets():
    entries = {
        e["name"]: e for e in build_manifest([LakeNumbersPositive, OpsNumbersPositive])["checks"]
    }
    assert entries["lake_numbers_positive"]["guards"] == {
        "name": "lake/numbers",
        "uri": "dq://ready/lake/numbers",
    }
    assert entries["lake_numbers_positive"]["after"] == [
        {"name": "producer/numbers"},
        {"uri": "s3://bucket/numbers"},
    ]
    assert entries["ops_numbers_positive"]["guards"]["name"] == "ops_numbers_positive"
    assert entries["ops_numbers_positive"]["after"] == []


def test_migration_6_adds_the_readiness_table_to_an_older_database(tmp_path, monkeypatch):
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'dq.db'}")
    monkeypatch.setattr("scheduling.schema.MIGRATIONS", MIGRATIONS[:5])
    assert migrate(engine) == 5 and not sa.inspect(engine).has_table("dq_readiness")
    monkeypatch.undo()
    assert migrate(engine) == len(MIGRATIONS) and sa.inspect(engine).has_table("dq_readiness")
    engine.dispose()
