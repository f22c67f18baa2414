"""Where a key of a TOML file is written, so that every message about a contest file names its line.

:mod:`tomllib` gives values without positions. :func:`key_lines` reads the text
once more, line by line, and notes where each table header and each
``key = value`` line is, by its path: ``("id",)``, ``("split", "seed")``,
``("phase", 2, "end")`` (the second ``[[phase]]``), ``("phase", 2, "quota", "per_day")`` (its
``[phase.quota]``), ``("parameters", "beta")``
(from ``[parameters]`` or a dotted ``parameters.beta = ...``). It understands
the TOML that people write; a line inside a multi-line string that looks like a
key is noted too, which at worst points a message at a nearby line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date, datetime, time

Path_ = tuple[str | int, ...]

_KEY = r'(?:[A-Za-z0-9_-]+|"[^"]*"|\'[^\']*\')'
_HEADER = re.compile(rf"^\s*(\[\[?)\s*({_KEY}(?:\s*\.\s*{_KEY})*)\s*\]\]?\s*(?:#.*)?$")
_ASSIGNMENT = re.compile(rf"^\s*({_KEY}(?:\s*\.\s*{_KEY})*)\s*=")


def _parts(dotted: str) -> list[str]:
    return [p.strip().strip("\"'") for p in re.findall(rf"{_KEY}", dotted)]


def key_lines(text: str) -> dict[Path_, int]:
    """The line (from 1) of every table header and key, by path."""
    lines: dict[Path_, int] = {}
    table: Path_ = ()
    arrays: dict[tuple[str, ...], int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER.match(line)
        if header:
            names = tuple(_parts(header.group(2)))
            if header.group(1) == "[[":
                arrays[names] = arrays.get(names, 0) + 1
                table = (*_in_arrays(names[:-1], arrays), names[-1], arrays[names])
                lines.setdefault((*table[:-1],), number)  # the array itself: its first table
            else:
                table = _in_arrays(names, arrays)
            lines.setdefault(table, number)
            continue
        assignment = _ASSIGNMENT.match(line)
        if assignment:
            lines.setdefault((*table, *_parts(assignment.group(1))), number)
    return lines


def _in_arrays(names: tuple[str, ...], arrays: dict[tuple[str, ...], int]) -> Path_:
    """A table's path with the index of each array of tables it is under: ``[phase.quota]`` after a second ``[[phase]]`` is ``phase[2].quota``."""
    path: Path_ = ()
    for end in range(1, len(names) + 1):
        path = (*path, names[end - 1])
        if names[:end] in arrays:
            path = (*path, arrays[names[:end]])
    return path


def line_of(lines: Mapping[Path_, int], path: Path_) -> int | None:
    """The line of ``path``, or of its nearest enclosing table written in the file."""
    for end in range(len(path), 0, -1):
        if path[:end] in lines:
            return lines[path[:end]]
    return None


def dotted(where: Path_) -> str:
    """A key path as the file writes it: ``phase[2].end``."""
    text = ""
    for part in where:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def toml_type(value: object) -> str:
    """What a TOML value is, as a message says it: ``a string``, ``a date-time``, ``a table``."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, datetime):
        return "a date-time"
    if isinstance(value, (date, time)):
        return "a date" if isinstance(value, date) else "a time"
    return {str: "a string", int: "an integer", float: "a number"}.get(type(value), type(value).__name__)
