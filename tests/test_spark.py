"""The Spark session factory: where a session runs, from arguments and the environment."""

from __future__ import annotations

import os

import pytest

from checkers import spark_target


@pytest.mark.parametrize(
    ("kwargs", "environ", "expected"),
    [
        ({}, {}, ("master", "local[2]")),
        ({}, {"DQ_SPARK_MASTER": "spark://h:7077"}, ("master", "spark://h:7077")),
        ({}, {"DQ_SPARK_REMOTE": "sc://h:15002"}, ("remote", "sc://h:15002")),
        (
            {},
            {"DQ_SPARK_REMOTE": "sc://h:15002", "DQ_SPARK_MASTER": "yarn"},
            ("remote", "sc://h:15002"),
        ),
        ({"master": "local[4]"}, {"DQ_SPARK_REMOTE": "sc://h:15002"}, ("master", "local[4]")),
        ({"remote": "sc://x:1", "master": "local[4]"}, {}, ("remote", "sc://x:1")),
        ({}, {"DQ_SPARK_REMOTE": "", "DQ_SPARK_MASTER": ""}, ("master", "local[2]")),
    ],
)
def test_spark_target_precedence(kwargs, environ, expected) -> None:
    assert spark_target(environ=environ, **kwargs) == expected


def test_the_session_factory_returns_the_running_session(spark) -> None:
    from checkers import spark_session

    assert spark_session() is spark  # one session per process: no second JVM


def test_an_unreachable_connect_server_fails_fast_naming_it() -> None:
    import socket

    from checkers import spark_session

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed on leaving: nothing listens there
    expected = f"no Spark Connect server answers at 127.0.0.1:{port}"
    with pytest.raises(ConnectionError, match=expected):
        spark_session(remote=f"sc://127.0.0.1:{port}/;user_id=dq")


@pytest.mark.connect
@pytest.mark.connect_only  # deselected in the classic pass: it needs the Connect pass's server
def test_a_remote_url_gets_a_working_spark_connect_session(spark, monkeypatch, tmp_path) -> None:
    """The Connect pass's local server reached by URL, as a deployment reaches its own
    (DQ_SPARK_REMOTE): the factory probes it, keeps the client's progress bar out of a run that
    logs to a file, and the session computes."""
    from checkers import spark_session
    from checkers.shipping import is_connect
    from checkers.spark_logs import CONNECT_PROGRESS_ENV, SPARK_LOG_ENV

    assert is_connect(spark)  # run by the Connect pass only
    port = spark.conf.get("spark.connect.grpc.binding.port", "15002")
    monkeypatch.setenv("DQ_SPARK_REMOTE", f"sc://localhost:{port}")
    monkeypatch.setenv(SPARK_LOG_ENV, str(tmp_path / "spark.log"))
    monkeypatch.setenv(CONNECT_PROGRESS_ENV, "1")
    session = spark_session()
    assert is_connect(session)
    assert session.range(3).count() == 3
    assert os.environ[CONNECT_PROGRESS_ENV] == "0"
