"""Scheduling: clocks, due windows, the runner and the `dq` command line."""
