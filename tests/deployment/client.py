"""A dq-checkers client in its own process (a classic driver and a Spark Connect client cannot
share the test process's classic session): evaluates the DQ_CHECKS checks on each Spark target in
turn (one session at a time, one JVM for the classic ones), with the doctor's Spark findings, and
prints one JSON line after RESULT_MARK: {target: {"outcomes": ..., "doctor": ...}}.

    python -m tests.deployment.client local[2] spark://127.0.0.1:7077
    python -m tests.deployment.client sc://127.0.0.1:15002
"""

from __future__ import annotations

import json
import sys
import time

RESULT_MARK = "DQ-CLIENT-RESULT "


def evaluate(target: str) -> dict[str, object]:
    from checkers.shipping import checks_packages
    from checkers.spark import spark_session
    from checks.registry import discover_all
    from scheduling.tick.evaluate import evaluate_checks

    started = time.perf_counter()
    if target.startswith("sc://"):
        spark = spark_session(app_name="dq-deployment", remote=target)
    else:
        spark = spark_session(app_name="dq-deployment", master=target)
    timings = {"session_s": time.perf_counter() - started}
    try:
        found = discover_all(checks_packages())
        assert not found.problems, found.problems
        outcomes = evaluate_checks(list(found.checks.values()), spark=spark)
        timings["evaluate_s"] = time.perf_counter() - started - timings["session_s"]
        result: dict[str, object] = {
            "outcomes": {
                o.check: {
                    "status": o.status.value,
                    "failing": o.failing,
                    "total": o.total,
                    "error": o.error,
                }
                for o in outcomes
            }
        }
        from scheduling.cli.doctor import executors_finding, spark_finding

        findings = [spark_finding(spark), executors_finding(spark, checks_packages())]
        result["doctor"] = {f.name: {"ok": f.ok, "line": f.line()} for f in findings}
        result["timings"] = {**timings, "total_s": time.perf_counter() - started}
        return result
    finally:
        spark.stop()


if __name__ == "__main__":
    answers = {target: evaluate(target) for target in sys.argv[1:]}
    print(RESULT_MARK + json.dumps(answers), flush=True)
