"""Grouping (Alertmanager's group_by): incidents that open in the same run and share a group key
(the policy's `group_by`: owner, tag, source) go out as one notification per receiver, the
group's first incident's, listing the others, at the group's highest level. Pure: the key, the
member line and the root grown by a member; alerting.groups does the SQL."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import replace

from alerting.model import PAGE_LINK, GroupMember, Notification
from checkers.outcome import CheckOutcome

#: The longest group key stored as it is (dq_incidents.group_key holds 400 characters).
KEY_LENGTH = 400
#: What `group_by` may name.
GROUP_FIELDS = ("owner", "tag", "source")
#: A policy's `group_by` unless it says otherwise: the checks over one source fail together.
DEFAULT_GROUP_BY = ("source",)


def group_key(group_by: Sequence[str], outcome: CheckOutcome, source: str | None) -> str | None:
    """The outcome's group (`owner=analytics|source=path:/lake/flights`), or None when it has
    no value for one of the fields (an outcome without owner is not grouped by owner)."""
    parts = []
    for name in group_by:
        if name == "owner":
            value = outcome.owner
        elif name == "tag":
            value = ",".join(sorted(outcome.tags))
        else:
            value = source or ""
        if not value:
            return None
        parts.append(f"{name}={value}")
    key = "|".join(parts)
    if len(key) > KEY_LENGTH:  # a long query as the source: its digest
        return hashlib.sha256(key.encode()).hexdigest()
    return key or None


def with_member(root: Notification, member: Notification, headline: str) -> Notification:
    """The group's notification with `member` listed, at the higher of the two levels."""
    line = GroupMember(
        member.outcome.check,
        member.level.name,
        member.incident_id,
        headline,
        member.links.get(PAGE_LINK, ""),
    )
    return replace(
        root,
        members=(*root.members, line),
        level=max(root.level, member.level),
    )


__all__ = ["DEFAULT_GROUP_BY", "GROUP_FIELDS", "GroupMember", "group_key", "with_member"]
