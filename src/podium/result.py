"""The result document that ``podium evaluate`` and ``podium validate`` write.

``{"challenge", "status": "scored"|"rejected", "scores": {name: number|null},
"details", "warnings": [ISSUE], "errors": [ISSUE], "podium_version", "parameters"}``
with ``ISSUE = {"code", "message", "file", "line"}``. ``scores`` is flat; per-class
values use ``metric/class`` keys. A rejected submission has empty ``scores``.
No number in the document is NaN or infinite, ``details`` included: such a
value is written ``null``, so the document is strict JSON.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

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
            "scores": _json_safe(self.scores),
            "details": _json_safe(self.details),
            "warnings": [w.to_dict() for w in self.warnings],
            "errors": [e.to_dict() for e in self.errors],
            "podium_version": __version__,
            "parameters": _json_safe(self.parameters),
        }
        if self.run is not None:
            document["run"] = _json_safe(self.run)
        return document

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, allow_nan=False, default=_jsonable)


def _json_safe(value: Any) -> Any:
    """``value`` with every non-finite float (NumPy's too) replaced by ``None``, recursively."""
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _jsonable(value: object) -> object:
    """Paths and other objects in ``details`` or ``parameters`` become their text."""
    return str(value)
