"""Result documents read back (for ``podium rank``), and whether they can be ranked together.

Documents come from anywhere (a team's machine, an old podium), so reading one
checks everything it relies on and names the file in every refusal. Two results
compare only when their signatures agree on the challenge, the rule parameters
and the truth fingerprint, and, when ranking by a split, on the split
(:func:`podium.core.provenance.comparable_part`).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from podium.core.errors import PodiumError
from podium.core.provenance import COMPARED, comparable_part
from podium.core.result import REJECTED, SCORED
from podium.formats.files import FileProblem
from podium.formats.text import TextLimits, read_text

RESULT_LIMITS = TextLimits(
    max_bytes=64 << 20, max_line=64 << 20
)  # documents with per-image details of 100,000 images fit


@dataclass(frozen=True)
class Document:
    path: Path
    challenge: str
    status: str
    scores: dict[str, float | int | None]  # of the whole test set, or of the split asked for
    signature: dict[str, Any] | None
    units: Units | None = None  # the unit statistics of the whole test set, or of the split asked for


@dataclass(frozen=True)
class Units:
    """A document's unit statistics: column names, and each unit's row (NaN for null)."""

    columns: tuple[str, ...]
    rows: dict[str, list[float]]


def load_document(path: Path) -> dict[str, Any]:
    """The JSON object of a result document, read within limits; :class:`PodiumError` naming what is wrong."""
    try:
        doc = json.loads(read_text(path, RESULT_LIMITS), parse_constant=_refuse_constant)
    except FileProblem as exc:
        raise PodiumError(f"{path} {exc}") from None
    except (json.JSONDecodeError, ValueError, RecursionError) as exc:
        reason = "it is nested too deeply" if isinstance(exc, RecursionError) else str(exc).splitlines()[0][:200]
        raise PodiumError(f"{path} is not a podium result document: not valid JSON ({reason})") from None
    if not isinstance(doc, dict) or not {"challenge", "status", "scores"} <= doc.keys():
        raise PodiumError(f"{path} is not a podium result document (it needs challenge, status and scores)")
    return doc


def read_document(path: Path, challenge: str, split: str | None = None) -> Document:
    """A result document of ``challenge``, its scores taken from ``split`` if given; :class:`PodiumError` naming what is wrong."""
    doc = load_document(path)
    if doc["challenge"] != challenge:
        raise PodiumError(f"{path} is a result of {str(doc['challenge'])[:80]!r}, not {challenge!r}")
    status = doc["status"]
    if status not in (SCORED, REJECTED):
        raise PodiumError(f"{path} has status {str(status)[:80]!r}; a result document says 'scored' or 'rejected'")
    scores = doc["scores"] if split is None else _split_scores(path, doc, split)
    if not isinstance(scores, dict):
        raise PodiumError(f"{path} has scores of type {type(scores).__name__}; scores are an object of numbers")
    signature = doc.get("signature")
    if signature is not None:
        _check_signature(path, signature)
    units = parse_units(str(path), doc["units"], split) if status == SCORED and "units" in doc else None
    return Document(
        path, challenge, status, {str(k): _score_value(path, str(k), v) for k, v in scores.items()}, signature, units
    )


def parse_units(path: str, units: Any, split: str | None) -> Units:
    """A document's ``units`` checked (columns are names, every row has one number or null per column), null read as NaN;
    the rows of ``split`` only, when given. ``path`` names the document in messages."""
    if (
        not isinstance(units, dict)
        or not isinstance(units.get("columns"), list)
        or not isinstance(units.get("rows"), dict)
    ):
        raise PodiumError(f"{path}: units must be an object with a list of columns and an object of rows")
    columns = units["columns"]
    if not all(isinstance(c, str) for c in columns):
        raise PodiumError(f"{path}: units.columns must be names")
    rows: dict[str, list[float]] = {}
    for key, row in units["rows"].items():
        if (
            not isinstance(row, list)
            or len(row) != len(columns)
            or not all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in row)
        ):
            raise PodiumError(f"{path}: units.rows[{key[:80]!r}] must hold {len(columns)} numbers")
        rows[key] = [float("nan") if v is None else float(v) for v in row]
    split_of = units.get("split")
    if split_of is not None and not isinstance(split_of, dict):
        raise PodiumError(f"{path}: units.split must map units to splits")
    if (
        split is not None and split_of is not None
    ):  # without split names (a public view) the rows are the split's already
        rows = {k: v for k, v in rows.items() if split_of.get(k) == split}
    return Units(tuple(columns), rows)


def _check_signature(path: Path, signature: object) -> None:
    """A signature's objects are objects (its values are compared and shown, never trusted further)."""
    parts: list[tuple[str, object]] = [("signature", signature)]
    if isinstance(signature, dict):
        parts.append(("signature.parameters", signature.get("parameters", {})))
        contest = signature.get("contest")
        if contest is not None:
            parts.append(("signature.contest", contest))
            if isinstance(contest, dict) and contest.get("split") is not None:
                parts.append(("signature.contest.split", contest["split"]))
    for name, value in parts:
        if not isinstance(value, dict):
            raise PodiumError(f"{path} has a {name} of type {type(value).__name__}; it must be an object")


def _split_scores(path: Path, doc: dict[str, Any], split: str) -> object:
    if doc["status"] == REJECTED:
        return {}
    splits = doc.get("splits")
    if not isinstance(splits, dict) or not isinstance(splits.get(split), dict):
        raise PodiumError(
            f"{path} has no {split} split (it was not scored with a contest split, or it is a public view)"
        )
    return splits[split].get("scores")


def _refuse_constant(constant: str) -> None:
    raise ValueError(f"{constant} is not a number a result document may hold")


def _score_value(path: Path, key: str, value: object) -> float | int | None:
    """A score as a finite number or null; anything else is refused."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise PodiumError(
            f"{path}: score {key[:80]!r} is {type(value).__name__ if not isinstance(value, bool) else 'a boolean'}, not a number"
        )
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if not math.isfinite(number):
        raise PodiumError(f"{path}: score {key[:80]!r} is too large to be a score")
    return value


def differences(documents: list[Document], with_split: bool, contest_id: str | None = None) -> list[str]:
    """Why ``documents`` cannot be ranked together, one sentence per difference; empty when they can."""
    unsigned = [d.path.name for d in documents if d.signature is None]
    if unsigned:
        return [
            f"{', '.join(unsigned)} {'has' if len(unsigned) == 1 else 'have'} no signature (written before podium 0.2), so nothing says what was scored"
        ]
    found = []
    if contest_id is not None:
        others = [d.path.name for d in documents if ((d.signature or {}).get("contest") or {}).get("id") != contest_id]
        if others:
            found.append(
                f"{', '.join(others)} {'was' if len(others) == 1 else 'were'} not scored in the contest {contest_id}"
            )
    parts = [comparable_part(d.signature or {}, with_split) for d in documents]
    names = {**COMPARED, "split": "split"}
    for key in parts[0]:
        values = [json.dumps(p[key], sort_keys=True) for p in parts]
        if len(set(values)) > 1:
            found.append(f"they differ in {names[key]}: " + _who_has(documents, [p[key] for p in parts]))
    return found


def _who_has(documents: list[Document], values: list[Any]) -> str:
    """``a.json has roi=union, b.json has roi=all`` (parameters named key by key)."""
    if all(isinstance(v, dict) for v in values) and not any("fingerprint" in v for v in values):
        keys = sorted({k for v in values for k in v if len({json.dumps(w.get(k)) for w in values}) > 1})
        values = [", ".join(f"{k}={json.dumps(v.get(k))}" for k in keys) for v in values]
    shown: dict[str, list[str]] = {}
    for document, value in zip(documents, values):
        shown.setdefault(str(value)[:120], []).append(document.path.name)
    return "; ".join(
        f"{', '.join(names)} {'has' if len(names) == 1 else 'have'} {value}" for value, names in shown.items()
    )
