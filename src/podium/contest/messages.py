"""pydantic's errors about a contest file as podium's messages: the key as the file writes it, its line, what it takes.

Every error of one validation becomes one message (a :class:`~podium.contest.model.Refusal`
may hold several), so a contest file's problems are all listed at once. What a key
takes is its field's ``title`` (``a positive integer``); an unknown key gets the
nearest known one as a hint.
"""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails

from podium.contest.model import ContestFile, Refusal
from podium.contest.toml_lines import Path_, dotted, line_of, toml_type

_RANGE = {
    "greater_than",
    "greater_than_equal",
    "less_than",
    "less_than_equal",
    "string_pattern_mismatch",
    "literal_error",
}


def messages(error: ValidationError, lines: Mapping[Path_, int]) -> Iterator[tuple[int | None, str]]:
    """Each problem of ``error`` (a validation of :class:`ContestFile`) as its line and message."""
    for detail in error.errors(include_url=False):
        where = _toml_path(detail["loc"])
        refusal = (detail.get("ctx") or {}).get("error")
        if isinstance(refusal, Refusal):
            for key, message in refusal.problems:
                full = (*where, *_toml_path(key))
                yield line_of(lines, full), message.replace("{key}", dotted(full))
        else:
            yield line_of(lines, where), _message(detail, where)


def _message(detail: ErrorDetails, where: Path_) -> str:
    name, value, kind = dotted(where), detail["input"], detail["type"]
    parent, field = _field(where[:-1]), _field(where)
    if kind == "extra_forbidden":
        table = ContestFile if parent is None else _model_of(parent.annotation)
        allowed = list(table.model_fields) if table is not None else []
        hint = difflib.get_close_matches(str(where[-1]), allowed, n=1)
        return f"unknown key {name}" + (f"; did you mean {hint[0]}?" if hint else f" (keys: {', '.join(allowed)})")
    what = "a table" if isinstance(where[-1], int) else field.title if field is not None else None
    if kind == "missing":
        return f"{name} is missing" + (f": {what}" if what else "")
    if kind in _RANGE and isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return (
            f"{name} = {value[:80]!r}: must be {what}"
            if isinstance(value, str)
            else f"{name} = {value}: must be {what}"
        )
    if kind == "too_short":
        return f"{name} must be {what}, not an empty array"
    return f"{name} must be {what}, not {toml_type(value)}" if what else f"{name}: {detail['msg']}"


def _toml_path(loc: tuple[int | str, ...]) -> Path_:
    """pydantic's location as a TOML key path: arrays of tables count from 1 (``phase[1]`` is the first ``[[phase]]``)."""
    return tuple(part + 1 if isinstance(part, int) else part for part in loc)


def _field(where: Path_) -> FieldInfo | None:
    """The declared field at ``where``, walking down the tables."""
    model: type[BaseModel] | None = ContestFile
    field = None
    for part in where:
        if isinstance(part, int):
            continue
        if model is None or part not in model.model_fields:
            return None
        field = model.model_fields[part]
        model = _model_of(field.annotation)
    return field


def _model_of(annotation: Any) -> type[BaseModel] | None:
    """The table model an annotation holds (``Split | None``, ``list[Phase]``), if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) in (list, typing.Union):
        for argument in typing.get_args(annotation):
            model = _model_of(argument)
            if model is not None:
                return model
    return None
