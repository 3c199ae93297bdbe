"""Secrets named by parser options: a secret pasted where its variable's name belongs is refused
without being echoed, and a secret value is never quoted by an error (HttpJsonParser against a
loopback server)."""

from __future__ import annotations

import json
import traceback
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler

import pytest

from checkers.env_secrets import env_name, secret_from_env
from checkers.parsers import HttpJsonParser, SourceError
from tests.http_stub import Reply, http_stub

PASTED = "Bearer sk_live_0123456789abcdef"


def _echo(request: BaseHTTPRequestHandler) -> Reply:
    return Reply(200, json.dumps([{"auth": request.headers.get("Authorization")}]).encode())


@pytest.fixture(scope="module")
def echo() -> Iterator[str]:
    with http_stub(_echo) as url:
        yield f"{url}/"


def test_http_parser_refuses_a_token_in_headers_from_env():
    with pytest.raises(ValueError, match=r"headers_from_env\[1\] must name an environment") as err:
        HttpJsonParser(
            "https://api.example.com/x",
            headers_from_env=(("Accept-Language", "API_LANG"), ("Authorization", PASTED)),
        )
    text = "".join(traceback.format_exception(err.value))
    assert "sk_live" not in text and "Bearer" not in text


def test_http_header_secrets_are_read_without_being_echoed(spark, echo, monkeypatch):
    parser = HttpJsonParser(echo, headers_from_env=(("Authorization", "DQ_TEST_API_AUTH"),))
    # a secret mounted from a file ends with a newline: sent without it
    monkeypatch.setenv("DQ_TEST_API_AUTH", "Bearer t0ken\n")
    assert parser.load(spark).collect()[0]["auth"] == "Bearer t0ken"
    # a line break inside makes the HTTP client refuse the header, quoting it: we refuse first
    monkeypatch.setenv("DQ_TEST_API_AUTH", "Bearer first-half\nsecond-half")
    with pytest.raises(SourceError, match=r"headers_from_env.*holds a line break") as err:
        parser.load(spark)
    text = "".join(traceback.format_exception(err.value))
    assert "first-half" not in text and "second-half" not in text


def test_env_names_and_values():
    assert env_name("token_env", "SLACK_BOT_TOKEN") == "SLACK_BOT_TOKEN"
    for bad in ("xoxb-1-2", "9LIVES", "", "A B", "A" * 129, None, 42):
        with pytest.raises(ValueError) as err:
            env_name("token_env", bad, owner="Slack receiver 'x'")
        assert str(err.value).startswith("Slack receiver 'x': token_env must name")
        assert "xoxb" not in str(err.value)
    assert secret_from_env("T", environ={"T": "  s3cret\r\n"}) == "s3cret"
    with pytest.raises(LookupError, match="environment variable T is not set"):
        secret_from_env("T", environ={"T": " \n"})
    with pytest.raises(LookupError, match=r"T \(Slack token\) holds a line break") as err:
        secret_from_env("T", what="Slack token", environ={"T": "s3c\x00ret"})
    assert "s3c" not in str(err.value)
