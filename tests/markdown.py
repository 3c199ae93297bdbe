"""Fenced code blocks of the Markdown docs: the docs test runs every ```python block, the
newcomer test pastes the README's check and test. ```python fragment blocks are not run."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
_FENCE = re.compile(r"^(?P<indent> *)(?P<fence>```+|~~~+)(?P<info>.*)$")


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # of the block's first code line, counting from 1
    info: str  # what follows the opening fence: "python", "python fragment", "sh", ""
    code: str

    @property
    def runs(self) -> bool:
        return self.info == "python"

    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"

    def compiled(self):  # type: ignore[no-untyped-def]
        """The code compiled so that tracebacks name the Markdown file and its line numbers."""
        return compile("\n" * (self.line - 1) + self.code, str(self.path), "exec")


def blocks(path: Path) -> list[Block]:
    """Every fenced block of `path`, in order; an indented block (inside a list) is dedented."""
    found: list[Block] = []
    lines = path.read_text().splitlines()
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        index += 1
        if opening is None:
            continue
        indent, fence = len(opening["indent"]), opening["fence"]
        start, body = index, []
        while index < len(lines) and lines[index].strip() != fence:
            body.append(lines[index][indent:] if lines[index][:indent].isspace() else lines[index])
            index += 1
        index += 1  # the closing fence
        code = "\n".join(body) + "\n"
        found.append(Block(path, start + 1, opening["info"].strip(), code))
    return found


def python_blocks(path: Path) -> list[Block]:
    """The blocks the docs test runs (```python, not ```python fragment)."""
    return [b for b in blocks(path) if b.runs]
