"""The names a `dags/dq_checks.py` copied into Airflow before `scheduling/airflow/` existed imports
from here; new code imports `scheduling.airflow.manifest`. Kept until deployed DAG files are
copied again (README: deploying)."""

from scheduling.airflow.manifest import Entry, asset_key, load_manifest, task_ids
from scheduling.config import MANIFEST_ENV

__all__ = ["MANIFEST_ENV", "Entry", "asset_key", "load_manifest", "task_ids"]
