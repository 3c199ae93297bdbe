"""A bare Python for the executors: a virtual environment holding exactly the packages
docs/deployment.md says the executors' Python needs, with what those depend on, as `pip install`
would put them there. The packages are linked from this interpreter's site-packages (the local
PyPI mirror lacks some of them, e.g. datasketches, and unpacking pyarrow and pandas anew would
cost CI tens of CPU seconds)."""

from __future__ import annotations

import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

#: What the executors' Python needs, as docs/deployment.md lists it ("What the executors' Python
#: needs"): the pandas UDFs' pandas and pyarrow, and dq-checkers' dependencies its modules import.
DOCUMENTED = ("pandas", "pyarrow", "SQLAlchemy", "croniter", "datasketches")


def _name(text: str) -> str:
    return re.sub(r"[-_.]+", "-", text).lower()


def closure(names: tuple[str, ...]) -> list[metadata.Distribution]:
    """The installed distributions `pip install names` needs: the names and, recursively, their
    requirements whose markers hold here (no extras)."""
    found: dict[str, metadata.Distribution] = {}
    todo = list(names)
    while todo:
        name = _name(todo.pop())
        if name in found:
            continue
        dist = metadata.distribution(name)
        found[name] = dist
        for line in dist.requires or []:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(requirement.name)
    return sorted(found.values(), key=lambda d: _name(d.metadata["Name"]))


def _top_level(dist: metadata.Distribution) -> set[str]:
    """What the distribution put in site-packages: its top-level files and directories."""
    entries = set()
    for file in dist.files or []:
        top = file.parts[0]
        if top in ("..", "__pycache__") or top.endswith(".data"):
            continue
        entries.add(top)
    return entries


def bare_venv(directory: Path, names: tuple[str, ...] = DOCUMENTED) -> Path:
    """A venv at `directory` (no pip, no system site-packages) holding exactly `names` and what
    they require; its Python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(directory)], check=True)
    [site] = (directory / "lib").glob("python3*/site-packages")
    for dist in closure(names):
        source = Path(str(dist.locate_file("")))
        for entry in _top_level(dist):
            if not (site / entry).exists():
                (site / entry).symlink_to(source / entry)
    return directory / "bin" / "python"
