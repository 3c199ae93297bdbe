"""The installation id: random, made with the project database (migration 13), and part of every
dedup key, Message-ID, PagerDuty dedup_key and Slack message metadata, so two installations
posting to one channel or service (staging beside production, a rebuilt `dq.db`) never adopt
each other's messages as their own."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from alerting.tables import installation

_KEY = "dq_installation"


def installation_id(connection: Connection) -> str:
    """This database's installation id ("" for one not yet migrated to it), read once per
    database connection."""
    cached = connection.info.get(_KEY)
    if cached is None:
        found = connection.execute(sa.select(installation.c.id)).scalar()
        cached = connection.info[_KEY] = str(found or "")
    return str(cached)
