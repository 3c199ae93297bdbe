"""Quality checks: the `QualityCheck` base class teams subclass, the registry, running checks
into outcomes, and the example checks (`checks.examples`)."""

from checks.assets import Guarded
from checks.base import QualityCheck
from checks.registry import discover, get, registered

__all__ = ["Guarded", "QualityCheck", "discover", "get", "registered"]
