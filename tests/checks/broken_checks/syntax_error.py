"""Not Python: discovery reports a SyntaxError for this module (excluded from ruff)."""

class Unfinished(QualityCheck:
    clock = Cron("0 * * * *"
