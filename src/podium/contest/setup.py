"""What a scoring command scores with: the challenge, the truth and the settings, from options or a contest file."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from podium.contest.definition import Contest


@dataclass(frozen=True)
class Setup:
    """The challenge, truth and settings of a scoring run; ``contest`` when they come from a contest file."""

    challenge: str
    truth: Path
    settings: dict[str, str]
    contest: Contest | None

    def evaluation(self) -> dict[str, Any]:
        """The contest's keywords of :func:`podium.scoring.engine.evaluate` (its split and stamp), none without a contest."""
        return {} if self.contest is None else self.contest.evaluation()
