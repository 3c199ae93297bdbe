"""`dq serve` put together: the signing secret read first (no secret, no server), the project's
database and receivers from its settings, the app on uvicorn. uvicorn is told to trust no proxy
header: nothing here depends on the client's address or scheme."""

from __future__ import annotations

from typing import TYPE_CHECKING

from alerting.receivers import SlackReceiver
from scheduling.serve.modal import SlackApi
from scheduling.serve.signing import SlackSigning

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from scheduling.config import Config
    from scheduling.settings import Settings


def slack_api(settings: Settings) -> SlackApi | None:
    """The Web API of the project's Slack receiver (its token variable and endpoint), if any."""
    slack = next((r for r in settings.receivers.values() if isinstance(r, SlackReceiver)), None)
    if slack is None:
        return None
    return SlackApi(slack.token_env, slack.base_url, slack.timeout_s)


def build_app(settings: Settings, config: Config, *, signing: SlackSigning) -> Starlette:
    from scheduling.serve.app import create_app
    from scheduling.serve.work import Triage

    triage = Triage(settings.engine, settings.receivers, settings.delivery, slack_api(settings))
    return create_app(triage, signing, page_url=settings.serve_url)


def serve(
    settings: Settings, config: Config, *, signing: SlackSigning, host: str, port: int
) -> None:
    """Serve until interrupted."""
    import uvicorn

    app = build_app(settings, config, signing=signing)
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            host=host,
            port=port,
            proxy_headers=False,
            server_header=False,
            log_level="info",
            timeout_graceful_shutdown=10,
        )
    )
    server.run()
