"""The midnight tick under Airflow at scale (issue 12): 200 registered checks, 60 of them due at
midnight, over 10 sources, run three ways; one table of wall time, Spark applications started
and source reads. `python -m benchmarks.airflow_tick --help`."""
