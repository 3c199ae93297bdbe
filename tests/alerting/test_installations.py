"""Two installations, one Slack channel (issue 28, acceptance 4): staging and production (or a
rebuilt `dq.db`) each open incident 1 of the same check. Production's post is in the channel;
staging's deliverer died with its post in doubt (begun, never confirmed, as a SIGKILL between
the call and its record leaves it). Looking for its post by metadata, staging must not adopt
production's message: the installation id (migration 13) is part of every dedup key, Slack
metadata, Message-ID and PagerDuty dedup_key."""

from __future__ import annotations

import sqlalchemy as sa

from alerting.installation import installation_id
from alerting.tables import notifications
from tests.alerting.outbox_faults import two_installations_in_one_channel


def test_two_installations_in_one_channel_each_post_their_own(
    tmp_path, receivers, slack, smtp, pagerduty
):
    with two_installations_in_one_channel(tmp_path, receivers) as (production, staging):
        with production.connect() as a, staging.connect() as b:
            assert installation_id(a) and installation_id(a) != installation_id(b)
        [first, second] = slack.roots()  # staging posted its own root, adopting nothing
        keys = [m.metadata["event_payload"]["dedup_key"] for m in (first, second)]
        assert len(set(keys)) == 2
        for engine in (production, staging):
            with engine.connect() as connection:
                statuses = set(connection.execute(sa.select(notifications.c.status)).scalars())
            assert statuses == {"sent"}
    assert len({m["Message-ID"] for m in smtp[1].messages}) == len(smtp[1].messages) == 2
    assert len({e["dedup_key"] for e in pagerduty.events}) == len(pagerduty.events) == 2
