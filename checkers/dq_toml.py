"""dq.toml, the project's configuration file: the one function that parses it. `dq` reads it once
per command (scheduling.config); the check packages and alerting take the parsed document."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path


def read_document(path: str | Path, *, required: bool = False) -> Mapping[str, object]:
    """The parsed file; nothing when it does not exist, unless `required` (then it raises)."""
    file = Path(path)
    if not required and not file.is_file():
        return {}
    with file.open("rb") as handle:
        return tomllib.load(handle)
