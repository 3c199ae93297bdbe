"""The single Airflow DAG (wiring only)."""
