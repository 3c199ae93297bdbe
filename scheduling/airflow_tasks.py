"""The names a `dags/dq_checks.py` copied into Airflow before `scheduling/airflow/` existed imports
from here; new code imports `scheduling.airflow.tasks`. Kept until deployed DAG files are copied
again (README: deploying)."""

from scheduling.airflow.tasks import OUTCOMES, due, due_on_assets, evaluate, publication, settle

__all__ = ["OUTCOMES", "due", "due_on_assets", "evaluate", "publication", "settle"]
