"""What a demo writer returns: the synthetic test set's truth, a plausible submission, and the ``--set`` values they need."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Demo:
    """A synthetic test set written by :meth:`Challenge.write_demo`, and the ``--set`` values it needs."""

    truth: Path
    submission: Path
    settings: dict[str, str] = field(default_factory=dict)
