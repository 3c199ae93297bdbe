"""`dq backtest CHECK [--inject] [--json]`: replay a check's metric history through each of its
anomaly constraints at every sensitivity (checkers.metrics.backtest): judged points, alerts and
alerts per week; with `--inject`, the recall on synthetic faults. The check's checker is built
as a run builds it (over empty frames of its sources' promised schemas, else its sources loaded:
never a pass over the data), so its history, annotations, maintenance windows and settings are
the ones its runs use. A history its next run would complete (day one) is completed the same
way, not saved: an incremental check's per-partition points from its stored partition states,
a dated source's `TimeBuckets` from one grouped pass over the source (then it is loaded)."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from typing import Any

from scheduling.cli.exits import EXIT_ERROR, EXIT_OK, EXIT_USAGE
from scheduling.cli.times import iso_text, parse_time

FAR = dt.datetime(9999, 1, 1, tzinfo=dt.UTC)


def backtest_command(args: argparse.Namespace) -> int:
    check = args.project.checks().get(args.check)
    if check is None:
        print(f"dq backtest: no check named {args.check!r}", file=sys.stderr)
        return EXIT_USAGE
    found = check_reports(check, args.project.settings, parse_time(args.at), inject=args.inject)
    if isinstance(found, tuple):
        code, message = found
        print(f"dq backtest: {message}", file=sys.stderr)
        return code
    if args.json:
        print(json.dumps({"check": check.name, "constraints": found}, indent=2))
    else:
        for report in found:
            print(_table(check.name, report, args.inject))
    return EXIT_OK


def check_reports(
    check: Any, settings: Any, now: dt.datetime, *, inject: bool
) -> list[dict[str, Any]] | tuple[int, str]:
    """One report per anomaly constraint of `check`, or (exit code, why not). The history is
    completed as the check's next run would complete it (day one), without saving: an
    incremental check's per-partition history from its stored partition states, a history with
    `TimeBuckets` training from the buckets it lacks (one grouped pass over the source)."""
    from checkers.metric_checker import MetricChecker
    from checkers.metrics.time_buckets import bucket_points
    from scheduling.tick.day_one import day_one_points

    declared = _declared_data(check, now)
    checker, error = _built_checker(check, settings, now, declared)
    history = getattr(checker, "history", None)
    if declared is not None and getattr(history, "training", None) is not None:
        # its day-one buckets come from the source's rows: build it over the loaded source
        checker, error = _built_checker(check, settings, now, None)
    if error or checker is None:
        return EXIT_ERROR, f"{check.name}: {error or 'no checker'}"
    anomalies = [c for c in getattr(checker, "constraints", ()) if c.anomaly is not None]
    if not isinstance(checker, MetricChecker) or checker.history is None or not anomalies:
        return EXIT_USAGE, (
            f"{check.name} has no anomaly constraint with a metric history "
            "(has_no_anomalies and MetricChecker(..., history=...))"
        )
    store = settings.partition_store() if check.incremental else None
    reports = []
    for constraint in anomalies:
        spec = constraint.anomaly
        states: list[Any] = []
        buckets: list[Any] = []
        if store is not None and spec.per_partition:
            states = day_one_points(checker, check.name, store, constraint.analyzer, spec.tags)
        elif not spec.per_partition:
            buckets = bucket_points(checker.history, constraint.analyzer)
        report = _constraint_report(checker.history, constraint, inject, [*states, *buckets])
        reports.append({**report, "from_states": len(states), "from_buckets": len(buckets)})
    return reports


def _built_checker(
    check: Any, settings: Any, now: dt.datetime, data: dict[str, Any] | None
) -> tuple[Any, str | None]:
    """The check's checker as a run builds it (over `data`, else its loaded sources), or the
    reason it could not be built."""
    from scheduling.tick.evaluate import load, prepare

    evaluation = prepare([check], now=now, mutes=settings.mutes, data=data)
    load(evaluation)
    [item] = evaluation.items
    return item.checker, item.error


def _declared_data(check: Any, now: dt.datetime) -> dict[str, Any] | None:
    """Empty frames of the schemas the check's sources promise (its checker needs their
    columns, not their rows), or None when a source promises none: then it is loaded."""
    from pyspark.sql import SparkSession

    from checkers.spark import spark_session

    instance = check(now=now)
    sources = instance.sources()
    schemas = {name: parser.schema for name, parser in sources.items()}
    if not schemas or any(s is None for s in schemas.values()):
        return None
    spark = SparkSession.getActiveSession() or spark_session()
    frames = {name: spark.createDataFrame([], schema) for name, schema in schemas.items()}
    return {check.name: frames if instance.takes_mapping() else frames["data"]}


def _constraint_report(
    history: Any, constraint: Any, inject: bool, extra: list[Any]
) -> dict[str, Any]:
    from checkers.metrics.backtest import backtest
    from checkers.metrics.metric_history import Judging

    spec = constraint.anomaly
    points = history.repository.annotated_series(
        constraint.analyzer,
        source_table=history.source_table,
        before=FAR,
        tags=spec.tags,
        per_partition=spec.per_partition,
    )
    points = sorted([*points, *extra], key=lambda p: p.time)
    judging = Judging(
        None,
        spec.min_change if spec.min_change is not None else history.min_change,
        history.feedback(),
    )
    replays = backtest(points, spec, judging, inject=inject)
    return {
        "constraint": constraint.name,
        "points": len(points),
        "first": points[0].time.isoformat() if points else None,
        "last": points[-1].time.isoformat() if points else None,
        "configured": spec.sensitivity or history.sensitivity or "medium",
        "replays": [
            {
                "sensitivity": r.sensitivity,
                "judged": r.judged,
                "alerts": r.alerts,
                "alerts_per_week": round(r.alerts_per_week, 3),
                **({"recall": r.recall} if inject else {}),
            }
            for r in replays
        ],
    }


def _table(check: str, report: dict[str, Any], inject: bool) -> str:
    span = f"{report['first'][:10]} .. {report['last'][:10]}" if report["points"] else "no history"
    lines = [f"{check}: {report['constraint']}: {report['points']} points, {span}"]
    if report.get("from_buckets"):
        lines[0] += f" ({report['from_buckets']} from the source's time buckets, not saved)"
    faults = list(report["replays"][0].get("recall", {})) if inject else []
    header = ["sensitivity", "judged", "alerts", "alerts/week", *(f"recall {f}" for f in faults)]
    rows = []
    for replay in report["replays"]:
        mark = " *" if replay["sensitivity"] == report["configured"] else ""
        recall = replay.get("recall", {})
        rows.append(
            [
                replay["sensitivity"] + mark,
                str(replay["judged"]),
                str(replay["alerts"]),
                f"{replay['alerts_per_week']:.2f}",
                *("-" if recall[f] is None else f"{recall[f]:.2f}" for f in faults),
            ]
        )
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        lines.append(
            "  ".join(
                cell.rjust(w) if i else cell.ljust(w)
                for i, (cell, w) in enumerate(zip(row, widths, strict=True))
            )
        )
    lines.append("(* the check's sensitivity)")
    return "\n".join(lines)


def add_backtest_commands(commands: Any) -> None:
    """`dq backtest CHECK` on the CLI's subcommands."""
    backtest = commands.add_parser(
        "backtest",
        help="replay a check's metric history through its anomaly constraints at each sensitivity",
    )
    backtest.add_argument("check")
    backtest.add_argument(
        "--inject", action="store_true", help="also inject synthetic faults: recall per kind"
    )
    backtest.add_argument("--json", action="store_true", help="one JSON document")
    backtest.add_argument(
        "--at", type=iso_text, help="ISO time the check is built at (default now)"
    )
    backtest.set_defaults(func=backtest_command)
