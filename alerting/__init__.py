"""Alerting: incidents, escalation policies, receivers and the delivery outbox."""
