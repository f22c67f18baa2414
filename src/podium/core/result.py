"""The result document that ``podium evaluate``, ``validate`` and ``run`` write.

``{"schema_version", "challenge", "status": "scored"|"rejected", "scores": {name: number|null},
"details", "warnings": [ISSUE], "errors": [ISSUE], "podium_version", "parameters",
"signature", "splits"?, "units"?, "run"?, "view"?}`` with ``ISSUE = {"code", "message", "file", "line"}``.
``scores`` is flat; per-class values use ``metric/class`` keys. A rejected
submission has empty ``scores``. With a contest, ``splits`` holds each split's
``{"units", "scores", "details", "warnings"}``, and the top-level scores are the
whole test set's. ``units`` (challenges that declare unit statistics) holds
``{"columns": [name], "rows": {unit: [number]}, "split"?: {unit: split}}``: the
additive statistics of every unit, from which a bootstrap resamples scores. The JSON Schema is ``podium/schemas/result.schema.json``.

No number in the document is NaN or infinite, ``details`` included: such a
value is written ``null``, so the document is strict JSON.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from podium._version import __version__
from podium.core.errors import ContractError
from podium.core.issues import Issue
from podium.core.labels import (
    PRIVATE as PRIVATE,
)  # re-exported: the result's words, defined where the options read them without NumPy
from podium.core.labels import PUBLIC as PUBLIC
from podium.core.labels import REJECTED as REJECTED
from podium.core.labels import SCORED as SCORED
from podium.core.labels import Status as Status
from podium.core.lazy import LazyModule

if TYPE_CHECKING:
    import json
else:
    json = LazyModule("json")  # imported when a document is written: a command printing the table does not

SCHEMA_VERSION = 1


@dataclass
class Split:
    """The scores of one split of a contest's test set."""

    units: int
    scores: dict[str, float | int | None]
    details: dict[str, Any]
    warnings: list[Issue]

    def to_dict(self) -> dict[str, Any]:
        return {
            "units": self.units,
            "scores": _json_safe(self.scores),
            "details": _details(self.details),
            "warnings": [w.to_dict() for w in self.warnings],
        }


@dataclass
class UnitTable:
    """The additive statistics of every unit, and (in a contest) each unit's split."""

    columns: tuple[str, ...]
    rows: dict[str, tuple[float, ...]]
    split_of: Mapping[str, str] | None = None

    def to_dict(self, only: str | None = None) -> dict[str, Any]:
        """The document's ``units``; ``only`` keeps the rows of that split (and no split names)."""
        rows = {k: list(v) for k, v in sorted(self.rows.items())}
        if only is not None and self.split_of is not None:
            rows = {k: v for k, v in rows.items() if self.split_of.get(k) == only}
        document: dict[str, Any] = {"columns": list(self.columns), "rows": _json_safe(rows)}
        if self.split_of is not None and only is None:
            document["split"] = {k: self.split_of[k] for k in rows if k in self.split_of}
        return document


@dataclass
class Result:
    challenge: str
    status: Status
    scores: dict[str, float | int | None]
    details: dict[str, Any]
    warnings: list[Issue]  # about the submission: its files, its items
    errors: list[Issue]
    parameters: dict[str, Any] = field(default_factory=dict)
    run: dict[str, Any] | None = None  # podium run: how the program ran
    score_warnings: list[Issue] = field(default_factory=list)  # about the whole test set's scores
    splits: dict[str, Split] | None = None
    signature: dict[str, Any] = field(default_factory=dict)
    units: UnitTable | None = None

    def to_dict(self) -> dict[str, Any]:
        document = {
            "schema_version": SCHEMA_VERSION,
            "challenge": self.challenge,
            "status": self.status,
            "scores": _json_safe(self.scores),
            "details": _details(self.details, self.challenge),
            "warnings": [w.to_dict() for w in self.warnings + self.score_warnings],
            "errors": [e.to_dict() for e in self.errors],
            "podium_version": __version__,
            "parameters": _json_safe(self.parameters),
            "signature": _json_safe(self.signature),
        }
        if self.splits is not None:
            document["splits"] = {name: split.to_dict() for name, split in self.splits.items()}
        if self.units is not None:
            document["units"] = self.units.to_dict()
        if self.run is not None:
            document["run"] = _json_safe(self.run)
        return document

    def public_view(self) -> dict[str, Any]:
        """The document a participant may see while the private split is secret.

        It holds the public split's scores and details, the submission's own
        warnings and errors, and how its program ran; no number of the private
        split or of the whole test set, and no name of a private unit: where a
        warning names one (``4 images missing: testA_3, ...``), the name reads
        ``(private)``.
        """
        document = self.to_dict()
        if self.splits is None:  # no contest split: nothing is private
            return document | {"view": PUBLIC}
        private = sorted(
            (k for k, v in (self.units.split_of or {}).items() if v != PUBLIC) if self.units else (),
            key=len,
            reverse=True,
        )
        document.update(
            view=PUBLIC, scores={}, details={}, warnings=[_unnamed(w.to_dict(), private) for w in self.warnings]
        )
        splits = document.pop("splits")
        document["splits"] = {PUBLIC: splits[PUBLIC]} if PUBLIC in splits else {}
        if self.units is not None:
            document["units"] = self.units.to_dict(only=PUBLIC)
        return document

    def to_json(self, public: bool = False) -> str:
        """The document as JSON: one top-level key per line, each value on its line.

        Only the outer object is laid out; the values are written compactly by the json
        module's C encoder, which ``indent`` would turn off: 100,000 per-photo details took
        1.2 s indented, a tenth of that now.
        """
        document = self.public_view() if public else self.to_dict()
        lines = [
            f"  {json.dumps(key)}: {json.dumps(value, allow_nan=False, default=_jsonable, separators=(', ', ': '))}"
            for key, value in document.items()
        ]
        return "{\n" + ",\n".join(lines) + "\n}"


def _unnamed(issue: dict[str, Any], names: list[str]) -> dict[str, Any]:
    """``issue`` with every whole-word occurrence of ``names`` (units of the private split) in its message and file read ``(private)``.

    >>> _unnamed({"message": "missing: testA_1, testA_10_seg.png", "file": None}, ["testA_10"])
    {'message': 'missing: testA_1, (private)_seg.png', 'file': None}
    """
    if not names:
        return issue
    pattern = re.compile(r"(?<![A-Za-z0-9])(?:" + "|".join(map(re.escape, names)) + r")(?![A-Za-z0-9])")
    hide = lambda text: pattern.sub("(private)", text) if isinstance(text, str) else text
    return {**issue, "message": hide(issue.get("message")), "file": hide(issue.get("file"))}


def _json_safe(value: Any, strict: bool = False) -> Any:
    """``value`` with every non-finite float (NumPy's too) replaced by ``None``, recursively.

    ``strict``: anything but dicts with string keys, lists, tuples, strings, numbers,
    booleans and ``None`` raises :class:`ValueError` (otherwise it is written as its text).

    Plain JSON values, the usual case, go through the json module's C encoder and decoder
    and come back as they would be written; anything else is walked in Python.
    """
    try:
        plain = json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError):  # NumPy integers, non-finite floats, other objects
        return _walked(value, strict)
    if strict and plain != value:  # tuples, or keys that are not strings
        return _walked(value, strict)
    return plain


def _walked(value: Any, strict: bool) -> Any:
    if isinstance(value, dict):
        if strict and not all(isinstance(k, str) for k in value):
            raise ValueError(f"a key {next(k for k in value if not isinstance(k, str))!r} is not a string")
        return {k: _walked(v, strict) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_walked(v, strict) for v in value]
    numpy = sys.modules.get("numpy")  # a NumPy scalar exists only once NumPy is loaded: a result may need none
    if numpy is not None and isinstance(value, numpy.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, (str, int, float)):
        return value
    if strict:
        raise ValueError(f"a {type(value).__name__} is not JSON")
    return _jsonable(value)  # a path among the parameters: its text, so that any JSON writer takes the document


def _details(details: dict[str, Any], challenge: str | None = None) -> Any:
    """The details as JSON; a challenge that put anything else there broke its contract."""
    try:
        return _json_safe(details, strict=True)
    except ValueError as exc:
        raise ContractError(f"{challenge or 'a split'}: the details are not JSON ({exc})") from None


def _jsonable(value: object) -> object:
    """Paths and other objects in ``details`` or ``parameters`` become their text."""
    return str(value)


def schema() -> dict[str, Any]:
    """The JSON Schema of result documents (draft 2020-12)."""
    from importlib import resources  # tempfile, shutil and the archive modules: a command that prints scores needs none

    return json.loads(resources.files("podium").joinpath("schemas/result.schema.json").read_text(encoding="utf-8"))
