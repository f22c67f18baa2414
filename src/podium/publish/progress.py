"""A progress bar for long runs, drawn by Rich once a run has lasted a second (Rich is imported then, not before)."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.progress import Progress


class DelayedProgress:
    """A progress bar on stderr that appears only once a run has lasted ``delay`` seconds.

    Nothing is drawn when stderr is not a terminal.
    """

    def __init__(self, label: str, delay: float = 1.0) -> None:
        self.label = label
        self.delay = delay
        self.start = time.monotonic()
        self.enabled = sys.stderr.isatty()
        self.bar: Progress | None = None
        self.task: Any = None

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        if self.bar is None:
            if time.monotonic() - self.start < self.delay or done >= total:
                return
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            from podium.publish.display import stderr

            self.bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=stderr,
                transient=True,
            )
            self.bar.start()
            self.task = self.bar.add_task(self.label, total=total)
        self.bar.update(self.task, completed=done)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
