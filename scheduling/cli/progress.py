"""A live line for a long `dq run` on a terminal (rich): what the run is doing, for how long. It
disappears when the run ends; nothing of it is drawn when stdout is not a terminal."""

from __future__ import annotations

import sys
from types import TracebackType
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

#: Called by the runner with what it does next ("evaluating 10 checks", "recording 3/10: x").
Stage = str


class RunProgress:
    """A context manager; call it with each stage. A no-op unless `enabled`."""

    def __init__(self, *, enabled: bool, stream: TextIO | None = None) -> None:
        self.enabled = enabled
        self.stream = stream or sys.stdout
        self._progress: Progress | None = None
        self._task: TaskID | None = None

    def __enter__(self) -> RunProgress:
        if self.enabled:
            from rich.console import Console
            from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

            console = Console(file=self.stream)
            if not console.is_terminal or console.is_dumb_terminal:
                return self  # nothing that can redraw a line in place
            progress = Progress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                TimeElapsedColumn(),
                console=console,
                transient=True,
            )
            progress.start()
            self._task = progress.add_task("starting", total=None)
            self._progress = progress
        return self

    def __call__(self, stage: Stage) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, description=stage, refresh=True)

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
