"""Quality checks: the `QualityCheck` base class teams subclass, and the example checks."""
