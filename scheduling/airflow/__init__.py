"""The Airflow integration, as a provider would hold it: `manifest` (what the DAG needs about every
check, read at parse time), `tasks` (what the DAG's tasks do, apart from Airflow) and
`worker_config` (what a worker must share with the others). Nothing is imported here: the DAG
parses with `manifest` alone, without Spark or the checks."""
