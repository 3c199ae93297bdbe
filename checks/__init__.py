"""Quality checks: the `QualityCheck` base class teams subclass, the registry, running checks
into outcomes, and the example checks (`checks.examples`)."""

from checks.base import QualityCheck
from checks.registry import discover, get, registered

__all__ = ["QualityCheck", "discover", "get", "registered"]
