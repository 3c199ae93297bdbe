"""Benchmarks: tables of time, Spark jobs and ratios against baselines run in the same process."""
