"""python -m benchmarks.faults: run the fault catalogue and print its table."""

from benchmarks.faults import run

print(run())
