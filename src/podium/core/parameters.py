"""Challenge parameters, set on the command line as ``--set KEY=VALUE`` or in a contest file.

Each challenge declares its parameters with a default and a one-line meaning;
:func:`resolve` turns the raw ``KEY=VALUE`` strings into typed values and
rejects unknown keys and bad values with a message that says what is allowed.

A parameter's ``role`` says what it is to a result's provenance:

- ``rule``: how the scores are computed. Results compare only under equal rules.
- ``data``: a file that is part of the truth (e.g. ILSVRC's boxes). Its content
  enters the truth fingerprint; its path, which differs between machines, does not count.
- ``check``: files read only for a sanity check of the truth, which adds warnings
  but changes no score.
- ``measured``: a measurement of one submission (running time, memory), set by
  ``podium run``; it differs between teams, and a contest cannot set it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from podium.core.errors import UsageError

Parser = Callable[[str], object]
Role = Literal["rule", "data", "check", "measured"]


@dataclass(frozen=True)
class Parameter:
    """A settable knob: ``parse`` turns text into a value or raises ``ValueError``."""

    name: str
    default: object
    help: str
    parse: Parser
    allowed: str  # what values are accepted, for messages and ``podium challenges``
    role: Role = "rule"
    contest_must_set: bool = False  # a contest file without it is an error (face-clustering's thresholds)

    @property
    def is_path(self) -> bool:
        """Its value is a path (relative to the contest file when set there)."""
        return self.role in ("data", "check")


def choice(name: str, default: str, help: str, options: Iterable[str]) -> Parameter:
    options = tuple(options)

    def parse(text: str) -> str:
        if text not in options:
            raise ValueError(f"must be one of {', '.join(options)}")
        return text

    return Parameter(name, default, help, parse, " | ".join(options))


def _integer_parser(low: int, high: int | None, allow_none: bool) -> Parser:
    bound = f"from {low} to {high}" if high is not None else f">= {low}"
    message = f"must be an integer {bound}" + (", or none" if allow_none else "")

    def parse(text: str) -> int | None:
        if allow_none and text.lower() == "none":
            return None
        try:
            value = int(text)
        except ValueError:
            raise ValueError(message) from None
        if value < low or (high is not None and value > high):
            raise ValueError(message)
        return value

    return parse


def integer(name: str, default: int, help: str, low: int) -> Parameter:
    """An integer at least ``low``."""
    return Parameter(name, default, help, _integer_parser(low, None, False), f"integer >= {low}")


def optional_integer(name: str, help: str, low: int, high: int) -> Parameter:
    """An integer in ``[low, high]``, or ``none`` (the default)."""
    return Parameter(name, None, help, _integer_parser(low, high, True), f"none | {low}..{high}")


def optional_path(name: str, help: str, what: str, folder: bool = False, role: Role = "data") -> Parameter:
    """An existing path (a folder if ``folder``), or ``none`` (the default); ``what`` names it in messages."""

    def parse(text: str) -> Path | None:
        if text.lower() == "none":
            return None
        path = Path(text)
        if not (path.is_dir() if folder else path.exists()):
            raise ValueError(f"must be {what}")
        return path

    return Parameter(name, None, help, parse, f"{'folder' if folder else 'path'} | none", role)


def real(
    name: str,
    default: float | None,
    help: str,
    minimum: float = 0.0,
    exclusive: bool = False,
    role: Role = "rule",
    contest_must_set: bool = False,
) -> Parameter:
    """A finite number at least ``minimum`` (above it if ``exclusive``); ``none`` if the default is none."""
    bound = f"> {minimum:g}" if exclusive else f">= {minimum:g}"

    def parse(text: str) -> float | None:
        if default is None and text.lower() == "none":
            return None
        try:
            value = float(text)
        except ValueError:
            raise ValueError(f"must be a number {bound}") from None
        if not math.isfinite(value) or value < minimum or (exclusive and value == minimum):
            raise ValueError(f"must be a finite number {bound}")
        return value

    allowed = f"number {bound}" + (" | none" if default is None else "")
    return Parameter(name, default, help, parse, allowed, role, contest_must_set)


def parse_settings(settings: Iterable[str]) -> dict[str, str]:
    """Split ``KEY=VALUE`` strings; the last setting of a key wins."""
    raw: dict[str, str] = {}
    for setting in settings:
        key, sep, value = setting.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--set takes KEY=VALUE, got {setting!r}")
        raw[key.strip()] = value.strip()
    return raw


def resolve(parameters: Iterable[Parameter], raw: Mapping[str, str]) -> dict[str, object]:
    """Typed values for every parameter: the defaults, overridden by ``raw``."""
    by_name = {p.name: p for p in parameters}
    values = {name: p.default for name, p in by_name.items()}
    for key, text in raw.items():
        if key not in by_name:
            known = ", ".join(by_name) or "none"
            import difflib  # a mistyped parameter only

            hint = difflib.get_close_matches(key, by_name, n=1)
            did_you_mean = f"; did you mean {hint[0]}?" if hint else ""
            raise UsageError(f"unknown parameter {key!r} (parameters: {known}){did_you_mean}")
        try:
            values[key] = by_name[key].parse(text)
        except ValueError as exc:
            raise UsageError(f"parameter {key}={text!r}: {exc}") from None
    return values
