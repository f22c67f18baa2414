"""The result document that ``podium evaluate`` and ``podium validate`` write.

``{"challenge", "status": "scored"|"rejected", "scores": {name: number|null},
"details", "warnings": [ISSUE], "errors": [ISSUE], "podium_version", "parameters"}``
with ``ISSUE = {"code", "message", "file", "line"}``. ``scores`` is flat; per-class
values use ``metric/class`` keys. A rejected submission has empty ``scores``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from podium import __version__
from podium.issues import Issue

SCORED = "scored"
REJECTED = "rejected"


@dataclass
class Result:
    challenge: str
    status: str
    scores: dict[str, float | int | None]
    details: dict[str, Any]
    warnings: list[Issue]
    errors: list[Issue]
    parameters: dict[str, Any] = field(default_factory=dict)
    run: dict[str, Any] | None = None  # podium run: how the program ran

    def to_dict(self) -> dict[str, Any]:
        document = {
            "challenge": self.challenge,
            "status": self.status,
            "scores": {k: _finite(v) for k, v in self.scores.items()},
            "details": self.details,
            "warnings": [w.to_dict() for w in self.warnings],
            "errors": [e.to_dict() for e in self.errors],
            "podium_version": __version__,
            "parameters": self.parameters,
        }
        if self.run is not None:
            document["run"] = self.run
        return document

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, allow_nan=False, default=_jsonable)


def _finite(value: float | int | None) -> float | int | None:
    """Counts stay integers; NaN becomes null."""
    if value is None or isinstance(value, int):
        return value
    return None if math.isnan(value) else float(value)


def _jsonable(value: object) -> object:
    """Numpy scalars and paths in ``details`` become plain JSON values."""
    if hasattr(value, "item"):
        return value.item()  # numpy scalar
    return str(value)
