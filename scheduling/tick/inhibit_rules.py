"""Which checks' failures an inhibitor explains (alerting.inhibition): the checks over the same
source, told by the parsers' source identities (the same path, table or query), and the checks
declaring `after=` the asset an inhibitor guards. Computed per tick from the check classes; a
parser that cannot say what it reads takes part in no rule."""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Iterable, Sequence

from alerting.inhibition import Inhibitor, InhibitRule
from checks import QualityCheck, registered
from checks.assets import Guarded

log = logging.getLogger(__name__)


def sources_read(check: type[QualityCheck], now: dt.datetime) -> dict[str, str]:
    """What `check` reads: source key -> label (its parsers, and the assets it runs `after`)."""
    found: dict[str, str] = {}
    try:
        for parser in check(now=now).sources().values():
            if (identity := parser.source_identity()) is not None:
                found[identity.key] = identity.label
    except Exception as exc:  # a broken parser is the check's ERROR outcome, not ours
        log.debug("no source identity for %s: %s", check.name, exc)
    for asset in check.after:
        found[f"asset:{asset}"] = asset
    return found


def source_key(check: type[QualityCheck], now: dt.datetime) -> str | None:
    """What `check` reads as one key, for grouping by source: its first source's."""
    return next(iter(sorted(sources_read(check, now))), None)


def sources_explained(check: type[QualityCheck], now: dt.datetime) -> dict[str, str]:
    """What an inhibitor's failure explains: what it reads, and the asset it guards."""
    found = sources_read(check, now)
    if isinstance(check.guards, Guarded):
        asset = check.guards.airflow_asset(check.name)
        found.update(
            {f"asset:{asset['name']}": asset["name"], f"asset:{asset['uri']}": asset["name"]}
        )
    return found


def inhibit_rules(
    checks: Sequence[type[QualityCheck]],
    now: dt.datetime,
    *,
    candidates: Iterable[type[QualityCheck]] | None = None,
) -> dict[str, InhibitRule]:
    """Each of `checks` that an inhibitor may explain: its rule. Inhibitors are the checks with
    `inhibits = True` among `candidates` (default: every registered check) and `checks`."""
    pool = {c.name: c for c in (registered().values() if candidates is None else candidates)}
    pool.update({c.name: c for c in checks})
    inhibitors = [c for c in pool.values() if c.inhibits is True]
    if not inhibitors:
        return {}
    explained = {i.name: sources_explained(i, now) for i in inhibitors}
    rules = {}
    for check in checks:
        reads = sources_read(check, now)
        found, covered = [], set()
        for inhibitor in inhibitors:
            shared = [key for key in reads if key in explained[inhibitor.name]]
            if inhibitor.name != check.name and shared:
                found.append(Inhibitor(inhibitor.name, reads[shared[0]]))
                covered.update(shared)
        if found:
            rules[check.name] = InhibitRule(tuple(found), explains_all=covered == set(reads))
    return rules
