"""Secrets from environment variables. Options such as `token_env` must name a variable: a value
that is not a name is most likely the secret itself, pasted by mistake, and is refused without
being repeated. Values are read so that they never end up in an error message either."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

MAX_LENGTH = 128
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def is_env_name(value: object) -> bool:
    """True for a plausible environment variable name: letters, digits and `_`, not starting
    with a digit, at most MAX_LENGTH characters."""
    return isinstance(value, str) and len(value) <= MAX_LENGTH and bool(_NAME.fullmatch(value))


def env_name(
    option: str, value: object, *, owner: str = "", environ: Mapping[str, str] | None = None
) -> str:
    """`value` if it names an environment variable (with `environ`: one set there); otherwise
    ValueError naming `option` (and `owner`, e.g. "receiver 'slack-dq'") but never quoting
    `value`: a secret can look like a name (a PagerDuty key, an alphanumeric password)."""
    where = f"{owner}: " if owner else ""
    if isinstance(value, str) and is_env_name(value):
        if environ is None or environ.get(value, "").strip():
            return value
        raise ValueError(
            f"{where}{option} names no environment variable set here; the given value is not "
            "shown (it may be a secret pasted by mistake: if so, rotate it). Set the variable, "
            "or give the name of the one that holds the secret."
        )
    raise ValueError(
        f"{where}{option} must name an environment variable (letters, digits and _, not "
        f"starting with a digit, at most {MAX_LENGTH} characters, e.g. SLACK_BOT_TOKEN), not "
        "hold the secret itself; the given value is not shown. If it was a secret, rotate it, "
        "put it in an environment variable and give that variable's name."
    )


def secret_from_env(
    variable: str,
    *,
    what: str = "",
    environ: Mapping[str, str] | None = None,
    option: str | None = None,
) -> str:
    """The value of `variable`, without surrounding blanks (a trailing newline from a mounted
    file). LookupError when it is unset or empty, or holds a line break or control character:
    HTTP libraries reject such a header value with a message that quotes it. A variable a user
    named in `option` is not named in the message (the name may be a pasted secret)."""
    value = (os.environ if environ is None else environ).get(variable, "").strip()
    named = unset_variable(option, what) if option else f"environment variable {variable}"
    named += f" ({what})" if what and not option else ""
    if not value:
        raise LookupError(f"{named} is not set")
    if not value.isprintable():
        raise LookupError(f"{named} holds a line break or control character (value not shown)")
    return value


def unset_variable(option: str, what: str = "") -> str:
    """How a message names the variable `option` gives, without its name."""
    return f"the environment variable named by {option}" + (f" ({what})" if what else "")
