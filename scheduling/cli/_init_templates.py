"""The files `dq init <package>` writes (scheduling/scaffold.py); `$package` is the package name."""

from __future__ import annotations

PACKAGE_INIT = '''\
"""$package: this project's data-quality checks. dq imports every module of this package
(dq.toml names it under `checks`), and each QualityCheck subclass registers itself: add a module
per dataset, or several checks in one."""
'''

CHECK_MODULE = '''\
"""An example check on data/orders.csv: run it with `dq run orders_have_amounts`, or with
`dq run --due` (one scheduler tick runs every check whose clock fires). Edit it, or copy it for
each dataset you check."""

from checkers import FailingShareThresholds, LessThan, PredicateSingleDatasetChecker
from checkers.parsers import CsvParser
from checks import QualityCheck
from scheduling.clocks import Cron


class OrdersHaveAmounts(QualityCheck):
    # Its name is orders_have_amounts (from the class name; `name = "..."` sets another).
    # Why it exists, shown in every alert and in the report:
    description = "Every order has a positive amount, or revenue reports undercount it."
    owner = "$package"  # who answers for it (alerts say so)

    # Where the data comes from: a CSV file with a header, relative to where dq runs. The schema
    # is a promise: a missing column or a value of another type makes the run an ERROR (the
    # check could not run), never a silent pass. Parquet, tables, SQL and HTTP: docs/checkers.md.
    parser = CsvParser("data/orders.csv", schema="order_id int, customer string, amount double")

    # When it runs: every 15 minutes, so each `dq run --due` runs it. Cron("0 6 * * *") would
    # run it daily at 06:00 UTC.
    clock = Cron("*/15 * * * *")

    # How much failure is acceptable: fewer than 2 failing rows is TOLERATED (exit 0). The sample
    # data has one refund booked as an order, so it is tolerated; add another row with a
    # negative amount and the run FAILS.
    tolerance = LessThan(2)

    # How bad the rest is, by the share of failing rows: WARNING up to 10%, ERROR up to 50%,
    # CRITICAL above (`dq run` then exits 1).
    alert_level = FailingShareThresholds(warning=0.1, error=0.5)

    def checker(self, orders):
        # What must hold for each row (a Spark SQL predicate; FALSE or NULL fails). `key` names
        # the column that identifies failing rows in alerts.
        return PredicateSingleDatasetChecker(orders, "amount > 0", key="order_id")
'''

ORDERS_CSV = """\
order_id,customer,amount
1,ana,12.50
2,bo,7.00
3,cy,-4.00
4,dee,30.25
"""

DQ_TOML = """\
# Settings of dq-checkers for this project. Environment variables win over this file, and
# secrets never live in it: receivers name the environment variables that hold them.

# The packages dq imports checks from (the environment variable DQ_CHECKS overrides this list).
checks = ["$package"]

# Receivers: where alerts go. Without any, alerts go to the console and to a JSON-lines file in
# the state directory (DQ_STATE_DIR, default .dq); Slack, email and PagerDuty also switch on
# from environment variables (README). Uncomment and edit to name your own:
#
# [receivers.team-slack]
# type = "slack"
# channel = "C0123456789"              # a channel ID
# token_env = "SLACK_BOT_TOKEN"        # the variable holding the bot token
#
# [receivers.team-mail]
# type = "email"
# host = "smtp.example.com"
# sender = "dq@example.com"
# recipients = ["data-team@example.com"]
# username_env = "SMTP_USER"
# password_env = "SMTP_PASSWORD"

# The default escalation policy: which receiver hears which level, and when an open incident
# escalates or is repeated. A check may set its own (`escalation = EscalationPolicy(...)`).
#
# [policies.default]
# routes = { team-slack = "WARNING", team-mail = "ERROR" }
# escalate_after_runs = 4              # still failing after 4 runs: one level up
# repeat_every_minutes = 240           # remind about an unchanged incident every 4 hours
"""

TEST_MODULE = '''\
"""Tests of $package's checks: each runs a check on a handful of rows (no files, no
database). `pytest` runs them; the `spark` fixture comes with dq-checkers."""

from checkers import AlertLevel, Status
from checks.testing import assert_outcome

from $package.orders import OrdersHaveAmounts


def test_one_negative_amount_is_tolerated(spark):
    assert_outcome(OrdersHaveAmounts, status=Status.TOLERATED, rows=[
        {"order_id": 1, "customer": "ana", "amount": 12.5},
        {"order_id": 2, "customer": "bo", "amount": -3.0},
    ])


def test_most_amounts_missing_is_critical(spark):
    assert_outcome(OrdersHaveAmounts, level=AlertLevel.CRITICAL, rows=[
        {"order_id": 1, "customer": "ana", "amount": 0.0},
        {"order_id": 2, "customer": "bo"},  # no amount: NULL fails the predicate too
        {"order_id": 3, "customer": "cy", "amount": 7.0},
    ])
'''
