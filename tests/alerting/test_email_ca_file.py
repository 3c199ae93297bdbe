"""Email to an SMTP server whose certificate a private CA signs (a self-signed one here, served
by a real aiosmtpd server speaking STARTTLS): delivered when the receiver trusts that CA through
`ca_file` (dq.toml) or DQ_SMTP_CA_FILE, refused with a clear, permanent error without it."""

from __future__ import annotations

import pytest

from alerting import load_config
from alerting.receivers import EmailReceiver
from tests.alerting.servers import self_signed_certificate, smtp_server
from tests.alerting.test_payloads import notification

NOTICE = notification()


@pytest.fixture
def server(tmp_path, monkeypatch):
    """The server's port, its mailbox and the certificate's PEM file; only the system's CAs
    are trusted by default."""
    for variable in ("DQ_SMTP_CA_FILE", "SSL_CERT_FILE", "SSL_CERT_DIR"):
        monkeypatch.delenv(variable, raising=False)
    cert, key = self_signed_certificate(tmp_path)
    with smtp_server(cert, key) as (port, mailbox):
        yield port, mailbox, cert


def _receiver(port: int, **options: object) -> EmailReceiver:
    return EmailReceiver(
        "mail",
        host="127.0.0.1",
        port=port,
        sender="dq@example.com",
        recipients=["billing@example.com"],
        **options,
    )


def test_without_the_ca_the_certificate_is_refused_clearly_and_nothing_is_sent(server):
    port, mailbox, _ = server
    delivery = _receiver(port).send(NOTICE, {}, 0)
    assert not delivery.ok and not delivery.retryable  # a setting to fix, not a blip
    assert "certificate is not trusted" in delivery.error and "ca_file" in delivery.error
    assert "DQ_SMTP_CA_FILE" in delivery.error and mailbox.messages == []


def test_the_ca_file_of_dq_toml_is_trusted(server, tmp_path):
    port, mailbox, cert = server
    config = tmp_path / "dq.toml"
    config.write_text(
        f'[receivers.mail]\ntype = "email"\nhost = "127.0.0.1"\nport = {port}\n'
        f'sender = "dq@example.com"\nrecipients = ["billing@example.com"]\nca_file = "{cert}"\n'
    )
    receiver = load_config(config).receivers["mail"]
    delivery = receiver.send(NOTICE, {}, 0)
    assert delivery.ok, delivery.error
    assert mailbox.tls == [True] and mailbox.messages[0]["To"] == "billing@example.com"


def test_the_environment_names_the_ca_file_for_every_email_receiver(server, monkeypatch):
    port, mailbox, cert = server
    monkeypatch.setenv("DQ_SMTP_CA_FILE", str(cert))
    assert _receiver(port).send(NOTICE, {}, 0).ok
    assert mailbox.tls == [True]


def test_a_ca_file_that_cannot_be_read_is_a_permanent_error(server, tmp_path):
    port, mailbox, _ = server
    delivery = _receiver(port, ca_file=str(tmp_path / "missing.pem")).send(NOTICE, {}, 0)
    assert not delivery.ok and not delivery.retryable
    assert "cannot read the SMTP CA file" in delivery.error and mailbox.messages == []
