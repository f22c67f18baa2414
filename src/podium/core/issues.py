"""Problems found in input files, and the log that collects them.

Readers never stop at the first problem: they record every one they find in an
:class:`IssueLog`, each naming its file and line where it has one. The log keeps
the first ``limit`` errors and warnings in full and counts the rest, so that a
submission with a million bad lines gives a short, readable answer.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Issue:
    """One problem: a stable machine-readable ``code`` and a plain ``message``."""

    code: str
    message: str
    file: str | None = None
    line: int | None = None

    def to_dict(self) -> dict[str, object]:
        return {"code": self.code, "message": self.message, "file": self.file, "line": self.line}

    def __str__(self) -> str:
        where = self.file or ""
        if self.line is not None:
            where += f":{self.line}"
        return f"{where}: {self.message}" if where else self.message


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """``'1 file'``, ``'3 files'``; ``nouns`` for irregular plurals (``'boxes'``)."""
    return f"{count:,} {noun if count == 1 else nouns or noun + 's'}"


def summarize_names(names: Iterable[str], shown: int = 10) -> str:
    """``'a, b, c and 12 more'``: a list of names cut to a readable length."""
    names = list(names)
    head = ", ".join(names[:shown])
    return head if len(names) <= shown else f"{head} and {len(names) - shown} more"


class _Capped:
    """A list that keeps its first ``limit`` entries and counts the rest."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.kept: list[Issue] = []
        self.dropped = 0

    def add(self, issue: Issue) -> None:
        if len(self.kept) < self.limit:
            self.kept.append(issue)
        else:
            self.dropped += 1

    def listing(self, kind: str) -> list[Issue]:
        if not self.dropped:
            return list(self.kept)
        more = Issue("more_" + kind, f"{self.dropped} more {kind} not listed")
        return [*self.kept, more]

    def __len__(self) -> int:
        return len(self.kept) + self.dropped


class IssueLog:
    """Collects errors (which reject a submission) and warnings (which do not)."""

    def __init__(self, limit: int = 50) -> None:
        self._errors = _Capped(limit)
        self._warnings = _Capped(limit)

    def error(self, code: str, message: str, file: object = None, line: int | None = None) -> None:
        self._errors.add(Issue(code, message, _name(file), line))

    def warning(self, code: str, message: str, file: object = None, line: int | None = None) -> None:
        self._warnings.add(Issue(code, message, _name(file), line))

    def add_errors(self, issues: Iterable[Issue]) -> None:
        for issue in issues:
            self._errors.add(issue)

    def add_warnings(self, issues: Iterable[Issue]) -> None:
        for issue in issues:
            self._warnings.add(issue)

    @property
    def error_count(self) -> int:
        return len(self._errors)

    @property
    def errors(self) -> list[Issue]:
        return self._errors.listing("errors")

    @property
    def warnings(self) -> list[Issue]:
        return self._warnings.listing("warnings")


def _name(file: object) -> str | None:
    return None if file is None else str(file)
