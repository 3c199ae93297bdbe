"""python -m benchmarks.faults [--only ROW ...]: run the fault catalogue (or its rows ROW; "13"
takes 13 and 13b) and print its table."""

import argparse

from benchmarks.faults import run

parser = argparse.ArgumentParser(prog="python -m benchmarks.faults")
parser.add_argument("--only", nargs="+", default=[], metavar="ROW", help="e.g. 13 15b")
print(run(parser.parse_args().only))
