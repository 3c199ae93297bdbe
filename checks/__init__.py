"""Quality checks: the `QualityCheck` base class teams subclass, the registry, running checks
into outcomes, and the example checks (`checks.examples`, discovered only when named)."""

from checks.assets import Guarded
from checks.base import QualityCheck
from checks.registry import discover, get, registered
from checks.task_states import TaskStates

__all__ = ["Guarded", "QualityCheck", "TaskStates", "discover", "get", "registered"]
