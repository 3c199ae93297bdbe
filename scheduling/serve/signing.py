"""Slack's request signing (v0): every request to a Slack route must carry `X-Slack-Signature`,
the HMAC-SHA256 of `v0:<X-Slack-Request-Timestamp>:<raw body>` under the app's signing secret,
with a timestamp within five minutes of now. slack_sdk's `SignatureVerifier` does the arithmetic
(constant-time compare); this module reads the secret and refuses to start without it."""

from __future__ import annotations

from collections.abc import Mapping

from slack_sdk.signature import Clock, SignatureVerifier

from checkers.env_secrets import secret_from_env
from checkers.project_db.clock import utc_now
from scheduling.config import SIGNING_SECRET_ENV

__all__ = ["MissingSigningSecret", "SlackSigning"]


class MissingSigningSecret(RuntimeError):
    """`dq serve` was started without SLACK_SIGNING_SECRET: it serves no Slack route unsigned."""


class _UtcClock(Clock):
    """The verifier's notion of now from dq's one clock."""

    def now(self) -> float:
        return utc_now().timestamp()


class SlackSigning:
    """Verifies Slack's signature on a request's raw body; the secret never leaves it."""

    def __init__(self, secret: str, *, clock: Clock | None = None) -> None:
        self._verifier = SignatureVerifier(secret, clock=clock or _UtcClock())

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> SlackSigning:
        try:
            secret = secret_from_env(
                SIGNING_SECRET_ENV, what="Slack signing secret", environ=environ
            )
        except LookupError as exc:
            raise MissingSigningSecret(
                f"{exc}: `dq serve` verifies every Slack request with it. Copy it from your Slack "
                "app's Basic Information page (App Credentials, Signing Secret) into "
                f"{SIGNING_SECRET_ENV}"
            ) from None
        return cls(secret)

    def verified(self, body: bytes, headers: Mapping[str, str]) -> bool:
        """True for a request Slack signed within the last five minutes, for exactly this body."""
        timestamp = headers.get("x-slack-request-timestamp", "")
        signature = headers.get("x-slack-signature", "")
        if not (timestamp.isascii() and timestamp.isdigit() and signature):
            return False
        try:
            return self._verifier.is_valid(body=body, timestamp=timestamp, signature=signature)
        except UnicodeDecodeError:  # Slack sends UTF-8; anything else is not Slack's
            return False
