"""Email over SMTP with STARTTLS and a verifying SSL context: HTML and plain text, and every mail
of an incident threaded under the first one (Message-ID / In-Reply-To / References). Message-IDs
derive from the dedup key, so a retried mail keeps its identity. A delivery run sends its mails
over one SMTP session (one connection, TLS handshake and login), closed when its share ends."""

from __future__ import annotations

import html
import os
import smtplib
import ssl
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from email.message import EmailMessage
from email.utils import format_datetime

from alerting.model import Notification
from alerting.receivers.base import Delivery, Thread
from alerting.render import (
    facts,
    group_text,
    headline,
    linkable,
    member_lines,
    sample_table,
    sample_text,
    title,
)
from checkers.env_secrets import env_name, unset_variable


def message_id(
    n: Notification, sequence: int, domain: str, *, incident: tuple[str, int] | None = None
) -> str:
    """`<dq.[installation.]fingerprint.incident.sequence@domain>` of `n`'s incident, or of
    `incident` (fingerprint, id: a group's first incident)."""
    fingerprint, incident_id = incident or (n.fingerprint, n.incident_id)
    ours = f"{n.installation[:12]}." if n.installation else ""
    return f"<dq.{ours}{fingerprint[:16]}.{incident_id}.{sequence}@{domain}>"


def build_email(
    n: Notification, *, sender: str, recipients: Sequence[str], domain: str
) -> EmailMessage:
    """The mail for `n` (pure): subject, threading headers, text and HTML bodies."""
    msg = EmailMessage()
    # one line: a line break in user text (an error message) must not make the header invalid
    msg["Subject"] = " ".join(f"{title(n)} - {headline(n)}{group_text(n)}".split())[:250]
    msg["From"] = sender
    msg["To"] = ", ".join(recipients)
    msg["Date"] = format_datetime(n.created_at)
    msg["Message-ID"] = message_id(n, n.sequence, domain)
    if n.thread_incident_id is not None and n.thread_fingerprint:  # in its group's thread
        first = message_id(n, 1, domain, incident=(n.thread_fingerprint, n.thread_incident_id))
        msg["In-Reply-To"] = first
        msg["References"] = first
    elif n.sequence > 1:
        first = message_id(n, 1, domain)
        msg["In-Reply-To"] = first
        msg["References"] = first
    msg["X-DQ-Incident"] = n.fingerprint
    lines = [headline(n), "", n.outcome.description, ""]
    lines += [f"{f.label}: {f.value}" for f in facts(n)]
    table = sample_text(n)
    if table:
        lines += ["", "Sample of failing elements:", table]
    lines += [f"{label}: {url}" for label, url in sorted(n.links.items())]
    if n.members and not n.resolved:
        lines += ["", f"Also opened in this run ({len(n.members)}):"]
        lines += [" ".join(filter(None, [lv, text, url])) for lv, text, url in member_lines(n)]
    msg.set_content("\n".join(lines) + "\n")
    msg.add_alternative(_html(n), subtype="html")
    return msg


def _html(n: Notification) -> str:
    e = html.escape
    rows = "".join(
        f"<tr><th align='left'>{e(f.label)}</th><td>{e(f.value)}</td></tr>" for f in facts(n)
    )
    parts = [
        f"<h2>{e(title(n))}</h2>",
        f"<p><strong>{e(headline(n))}</strong></p>",
        f"<p>{e(n.outcome.description)}</p>",
        f"<table>{rows}</table>",
    ]
    columns, sample = sample_table(n)
    if columns:
        head = "".join(f"<th>{e(c)}</th>" for c in columns)
        body = "".join("<tr>" + "".join(f"<td>{e(v)}</td>" for v in r) + "</tr>" for r in sample)
        parts.append(f"<h3>Sample of failing elements</h3><table><tr>{head}</tr>{body}</table>")
    parts += [
        f"<p><a href='{e(url)}'>{e(label)}</a></p>"
        if linkable(url)
        else f"<p>{e(label)}: {e(url)}</p>"
        for label, url in sorted(n.links.items())
    ]
    if n.members and not n.resolved:
        items = "".join(
            f"<li>{e(lv)} {e(text)}"
            + (f" <a href='{e(url)}'>incident</a>" if url and linkable(url) else "")
            + "</li>"
            for lv, text, url in member_lines(n)
        )
        parts.append(f"<h3>Also opened in this run ({len(n.members)})</h3><ul>{items}</ul>")
    return "<html><body>" + "".join(parts) + "</body></html>"


#: A CA bundle (PEM) that signs the SMTP server's certificate, for servers a private CA signs;
#: a receiver's own `ca_file` wins.
CA_FILE_ENV = "DQ_SMTP_CA_FILE"


class EmailReceiver:
    """Sends through `host:port` with STARTTLS (certificate and host name verified against the
    system's CAs, or those in `ca_file` / $DQ_SMTP_CA_FILE) and, when `username_env` /
    `password_env` are given, SMTP login with credentials from the environment."""

    def __init__(
        self,
        name: str,
        *,
        host: str,
        port: int = 587,
        sender: str,
        recipients: Sequence[str],
        username_env: str | None = None,
        password_env: str | None = None,
        starttls: bool = True,
        ca_file: str | None = None,
        ssl_context: Callable[[], ssl.SSLContext] | None = None,
        timeout_s: float = 30.0,
    ) -> None:
        if not recipients:
            raise ValueError(f"email receiver {name!r} needs recipients")
        owner = f"email receiver {name!r}"
        if username_env is not None:
            username_env = env_name("username_env", username_env, owner=owner)
        if password_env is not None:
            password_env = env_name("password_env", password_env, owner=owner)
        self.name = name
        self.host, self.port = host, port
        self.sender, self.recipients = sender, list(recipients)
        self.username_env, self.password_env = username_env, password_env
        self.starttls, self.ssl_context, self.timeout_s = starttls, ssl_context, timeout_s
        self.ca_file = ca_file
        self.domain = sender.rpartition("@")[2] or "dq-checkers"
        self._open: smtplib.SMTP | None = None  # kept between mails of one delivery run
        self._lock = threading.Lock()

    def send(
        self, notification: Notification, thread: Thread, step: int, *, in_flight: bool = False
    ) -> Delivery:
        # one step; a repeat after a crash carries the same Message-ID, so clients thread it once
        msg = build_email(
            notification, sender=self.sender, recipients=self.recipients, domain=self.domain
        )
        try:
            context = self._tls_context() if self.starttls else None
        except OSError as exc:  # a CA file that cannot be read: fix the setting, never retry
            return Delivery(ok=False, error=f"cannot read the SMTP CA file: {exc}")
        try:
            with self._session(context) as smtp:
                refused = smtp.send_message(msg)
        except smtplib.SMTPRecipientsRefused as exc:
            return Delivery(ok=False, error=f"all recipients refused: {sorted(exc.recipients)}")
        except smtplib.SMTPResponseException as exc:
            transient = 400 <= exc.smtp_code < 500
            return Delivery(
                ok=False, retryable=transient, error=f"SMTP {exc.smtp_code}: {exc.smtp_error!r}"
            )
        except ssl.SSLCertVerificationError as exc:
            return Delivery(
                ok=False,
                error="TLS failed: the SMTP server's certificate is not trusted "
                f"({exc.verify_message}); if a private CA signs it, give its PEM file as "
                f"ca_file (dq.toml) or {CA_FILE_ENV}",
            )
        except ssl.SSLError as exc:
            return Delivery(ok=False, error=f"TLS failed (certificate not trusted?): {exc}")
        except KeyError as exc:  # which option, not the name: it may be a pasted secret
            option = "username_env" if exc.args[0] == self.username_env else "password_env"
            return Delivery(ok=False, error=f"{unset_variable(option, 'SMTP login')} is not set")
        except (smtplib.SMTPException, OSError) as exc:
            # a timeout or a drop after DATA went out may still have delivered the mail
            return Delivery(
                ok=False, retryable=True, in_doubt=True, error=f"SMTP unreachable: {exc}"
            )
        partial = f"refused: {sorted(refused)}" if refused else None
        return Delivery(ok=True, steps_done=1, error=partial)

    @contextmanager
    def _session(self, context: ssl.SSLContext | None) -> Iterator[smtplib.SMTP]:
        """The delivery run's open SMTP session (one connection, TLS and login for many mails),
        or a new one; a session that failed is closed and forgotten, never reused."""
        with self._lock:
            smtp, self._open = self._open, None
        if smtp is not None and not _alive(smtp):
            smtp = None
        try:
            smtp = smtp or self._connect(context)
            yield smtp
        except BaseException:
            if smtp is not None:
                _close(smtp)
            raise
        with self._lock:
            smtp, self._open = self._open, smtp
        if smtp is not None:  # another thread's session came back first: one is enough
            _close(smtp)

    def _connect(self, context: ssl.SSLContext | None) -> smtplib.SMTP:
        smtp = smtplib.SMTP(self.host, self.port, timeout=self.timeout_s)
        try:
            smtp.ehlo()
            if context is not None:
                smtp.starttls(context=context)
                smtp.ehlo()
            if self.username_env and self.password_env:
                smtp.login(os.environ[self.username_env], os.environ[self.password_env])
        except BaseException:
            _close(smtp)
            raise
        return smtp

    def end_delivery(self) -> None:
        """The delivery run's share is over: QUIT the open session."""
        with self._lock:
            smtp, self._open = self._open, None
        if smtp is not None:
            _close(smtp)

    def _tls_context(self) -> ssl.SSLContext:
        """A verifying context: the given factory's, else one trusting `ca_file` (or
        $DQ_SMTP_CA_FILE) instead of the system's CAs when set."""
        if self.ssl_context is not None:
            return self.ssl_context()
        ca_file = self.ca_file or os.environ.get(CA_FILE_ENV) or None
        return ssl.create_default_context(cafile=ca_file)


def _alive(smtp: smtplib.SMTP) -> bool:
    """Whether a kept session still answers (the server may have closed it meanwhile)."""
    try:
        return smtp.noop()[0] == 250
    except (smtplib.SMTPException, OSError):
        _close(smtp)
        return False


def _close(smtp: smtplib.SMTP) -> None:
    try:
        smtp.quit()
    except (smtplib.SMTPException, OSError):
        smtp.close()
