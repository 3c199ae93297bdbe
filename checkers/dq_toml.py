"""dq.toml, the project's configuration file: the one function that parses it, and the error a
refused file raises, which names the file, the line and the key. `dq` reads it once per command
(scheduling.config); the check packages and alerting take the parsed document."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path

_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?")
_KEY = re.compile(r"""^\s*("[^"]*"|'[^']*'|[A-Za-z0-9_.\-]+)\s*=""")
_TOML_LINE = re.compile(r"\(at line (\d+), column \d+\)")


class DqTomlError(ValueError):
    """A dq.toml the loader refuses. `key` is the path of the key at fault (`("receivers",
    "slack-dq", "base_ulr")`; an int indexes an array of tables); `where` the file and line,
    once known (`located`)."""

    def __init__(self, message: str, *, key: Sequence[str | int] = (), where: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.key = tuple(key)
        self.where = where

    def __str__(self) -> str:
        return f"{self.where}: {self.message}" if self.where else self.message

    def located(self, path: Path) -> DqTomlError:
        """This error naming `path` and the line of its key in that file."""
        line = key_line(_text(path), self.key)
        where = f"{path}:{line}" if line else str(path)
        message = self.message.removeprefix("dq.toml: ")  # the file is named in `where`
        return DqTomlError(message, key=self.key, where=where)


def read_document(path: str | Path, *, required: bool = False) -> Mapping[str, object]:
    """The parsed file; nothing when it does not exist, unless `required` (then it raises). A
    file that is not TOML is a `DqTomlError` naming the file and the line."""
    file = Path(path)
    if not required and not file.is_file():
        return {}
    with file.open("rb") as handle:
        try:
            return tomllib.load(handle)
        except tomllib.TOMLDecodeError as exc:
            found = _TOML_LINE.search(str(exc))
            where = f"{file}:{found.group(1)}" if found else str(file)
            reason = _TOML_LINE.sub("", str(exc)).strip()
            raise DqTomlError(f"not valid TOML: {reason}", where=where) from None


def key_line(text: str, key: Sequence[str | int]) -> int | None:
    """The 1-based line of `key` in the TOML `text`: the key's own line, else its table's
    header; None when neither is written out (a key inside an inline table names its table's
    line)."""
    table: tuple[str | int, ...] = ()
    counts: dict[str, int] = {}
    best: int | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER.match(line)
        if header:
            table = _header_path(header.group(2), header.group(1) == "[[", counts)
            if table and table == tuple(key[: len(table)]):
                best = number
            continue
        found = _KEY.match(line)
        if found is None:
            continue
        path = (*table, *_split_key(found.group(1)))
        if path == tuple(key[: len(path)]):
            best = number
            if len(path) == len(key):
                return number
    return best


def _header_path(text: str, array: bool, counts: dict[str, int]) -> tuple[str | int, ...]:
    path: tuple[str | int, ...] = _split_key(text)
    if array:
        name = ".".join(str(p) for p in path)
        counts[name] = counts.get(name, -1) + 1
        path = (*path, counts[name])
    return path


def _split_key(text: str) -> tuple[str, ...]:
    parts = re.findall(r'"[^"]*"|\'[^\']*\'|[^.\s]+', text)
    return tuple(p.strip("\"'") for p in parts)


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
