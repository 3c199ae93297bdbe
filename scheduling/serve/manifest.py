"""The Slack app manifest for `dq serve` (`dq slack-manifest --url https://...`): the bot's
scopes, interactivity pointed at /slack/actions and the `/dq` command at /slack/commands. Slack
accepts it as JSON (App Manifest editor, "Create New App" -> "From an app manifest")."""

from __future__ import annotations

from urllib.parse import urlparse

__all__ = ["BOT_SCOPES", "slack_manifest"]

#: chat:write posts and edits incident messages; commands registers /dq; channels:history and
#: groups:history let the Slack receiver find an incident's thread again after a crash.
BOT_SCOPES = ("chat:write", "commands", "channels:history", "groups:history")


def slack_manifest(url: str, *, name: str = "dq-checkers") -> dict[str, object]:
    """The manifest for a `dq serve` reachable at `url` (https, as Slack requires)."""
    parsed = urlparse(url)
    if parsed.scheme != "https" or not parsed.netloc:
        raise ValueError(f"the URL Slack calls must be https://HOST[/PATH], got {url!r}")
    if parsed.query or parsed.fragment:
        raise ValueError(f"the URL Slack calls takes no query or fragment, got {url!r}")
    base = url.rstrip("/")
    return {
        "_metadata": {"major_version": 1, "minor_version": 1},
        "display_information": {
            "name": name[:35],
            "description": "Data-quality incidents: acknowledge, snooze, mark expected",
        },
        "features": {
            "bot_user": {"display_name": name[:80], "always_online": False},
            "slash_commands": [
                {
                    "command": "/dq",
                    "url": f"{base}/slack/commands",
                    "description": "Status, acknowledge or snooze a data-quality incident",
                    "usage_hint": "status CHECK | ack INCIDENT | snooze CHECK 4h | help",
                    "should_escape": False,
                }
            ],
        },
        "oauth_config": {"scopes": {"bot": list(BOT_SCOPES)}},
        "settings": {
            "interactivity": {"is_enabled": True, "request_url": f"{base}/slack/actions"},
            "org_deploy_enabled": False,
            "socket_mode_enabled": False,
            "token_rotation_enabled": False,
        },
    }
