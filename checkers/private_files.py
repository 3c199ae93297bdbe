"""Files that may hold personal data (failing-row samples, the SQLite project database, the
spool) are created readable by their owner alone, whatever the process's umask: folders 0700,
files 0600."""

from __future__ import annotations

import os
from pathlib import Path

PRIVATE_DIRECTORY = 0o700
PRIVATE_FILE = 0o600


def private_directory(path: str | Path) -> Path:
    """`path` and the folders it needs, each one created here made owner-only (folders that
    already existed keep their mode: they may be shared on purpose)."""
    target = Path(path)
    missing = []
    for folder in (target, *target.parents):
        if folder.exists():
            break
        missing.append(folder)
    target.mkdir(mode=PRIVATE_DIRECTORY, parents=True, exist_ok=True)
    for folder in missing:  # mkdir's mode is filtered by the umask
        os.chmod(folder, PRIVATE_DIRECTORY)
    return target


def private_file(path: str | Path) -> Path:
    """`path` created empty and owner-only when it does not exist (its folder too); an existing
    file is left as it is."""
    target = Path(path)
    private_directory(target.parent)
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE)
    except FileExistsError:
        return target
    try:
        os.fchmod(fd, PRIVATE_FILE)  # open's mode is filtered by the umask
    finally:
        os.close(fd)
    return target


def looser_than_private(path: str | Path) -> str | None:
    """`path`'s mode (e.g. `0644`) when group or others may read it, else None."""
    try:
        mode = Path(path).stat().st_mode & 0o777
    except OSError:
        return None
    return f"{mode:04o}" if mode & 0o077 else None
