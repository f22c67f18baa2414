"""The table of a result's scores, and its text where it goes to a pipe or a file, drawn without Rich.

``podium evaluate`` prints its scores as a table. On a terminal Rich draws it
(:func:`podium.publish.display.rich_table`); elsewhere (a pipe, a file, a program reading the
output) this module draws the very characters Rich would, so that a command whose output is read
by another program does not import Rich (40 ms of a new process). Where it could not be sure of
drawing them alike (a cell that is not printable ASCII or that Rich may read as markup or an
emoji code, or a table wider than Rich's width), it says so and Rich draws the table.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

from podium.core.labels import PUBLIC
from podium.publish.listing import direction

if TYPE_CHECKING:
    from podium.challenges.base import Challenge
    from podium.core.result import Result


@dataclass(frozen=True)
class ScoreTable:
    """A title, the column headers, which columns are right-aligned, and the rows (cells as plain text)."""

    title: str
    headers: tuple[str, ...]
    right: tuple[bool, ...]
    rows: tuple[tuple[str, ...], ...]


def score_table(challenge: Challenge, result: Result, public: bool = False) -> ScoreTable:
    """The scores, a column per split and one for the whole test set; ``public``: the public split's only."""
    public = public and result.splits is not None  # without a split, everything is public
    ordered = sorted((result.splits or {}).items(), key=lambda item: item[0] != PUBLIC)  # public first
    splits = {name: split.scores for name, split in ordered if not public or name == PUBLIC}
    columns = splits if public else {**splits, ("whole" if splits else "value"): result.scores}
    rows = []
    for name in result.scores:
        try:
            better = direction(challenge.score_spec(name).higher_is_better)
        except KeyError:
            better = ""
        rows.append((name, *(number_text(scores.get(name)) for scores in columns.values()), better))
    return ScoreTable(
        f"{challenge.id}: {result.status}",
        ("score", *columns, "better"),
        (False, *(True for _ in columns), False),
        tuple(rows),
    )


def number_text(value: Any) -> str:
    """A score in a table: six decimals for a float, ``null`` for none."""
    if value is None:
        return "null"
    if isinstance(value, float):
        return f"{value:.6f}"
    return str(value)


def is_terminal(stream: TextIO) -> bool:
    """Whether Rich would draw on ``stream`` as on a terminal (its rules: ``TTY_COMPATIBLE``, ``FORCE_COLOR``, then isatty)."""
    compatible = os.environ.get("TTY_COMPATIBLE", "")
    if compatible in ("0", "1"):
        return compatible == "1"
    force = os.environ.get("FORCE_COLOR")
    if force is not None:
        return force != ""
    try:
        return stream.isatty()
    except ValueError:  # closed
        return False


def rich_width() -> int:
    """The width Rich gives a console: a terminal's on standard input, output or error, ``COLUMNS``, else 80."""
    width = 0
    for descriptor in (0, 1, 2):
        try:
            width = os.get_terminal_size(descriptor).columns
            break
        except (AttributeError, ValueError, OSError):
            pass
    columns = os.environ.get("COLUMNS", "")
    return int(columns) if columns.isdigit() else width or 80


def plain_text(table: ScoreTable, width: int) -> str | None:
    """``table`` drawn as Rich draws it on a console that is not a terminal (heavy head box, a space of padding),
    or ``None`` where that cannot be sure: a cell that is not printable ASCII or holds a character Rich reads as
    markup or an emoji code (``[ ] \\\\ :``), a title wider than the table, or a table wider than ``width``.

    >>> text = plain_text(ScoreTable("x: scored", ("score", "value"), (False, True), (("a", "0.5"), ("bb", "1"))), 80)
    >>> text.splitlines()[0]  # the title, padded to the table's width
    'x: scored        '
    >>> print("\\n".join(text.splitlines()[1:]))
    ┏━━━━━━━┳━━━━━━━┓
    ┃ score ┃ value ┃
    ┡━━━━━━━╇━━━━━━━┩
    │ a     │   0.5 │
    │ bb    │     1 │
    └───────┴───────┘
    """
    cells = [table.headers, *table.rows]
    if not all(_plain(cell) for row in cells for cell in row):
        return None
    widths = [max(len(row[column]) for row in cells) for column in range(len(table.headers))]
    total = sum(widths) + 3 * len(widths) + 1
    if total > width or len(table.title) > total or not _plain(table.title.replace(": ", " ", 1)):
        return None

    def line(row: tuple[str, ...], wall: str) -> str:
        padded = (c.rjust(w) if right else c.ljust(w) for c, w, right in zip(row, widths, table.right))
        return wall + wall.join(f" {cell} " for cell in padded) + wall

    def rule(left: str, fill: str, middle: str, right: str) -> str:
        return left + middle.join(fill * (w + 2) for w in widths) + right

    return "\n".join(
        [
            table.title.ljust(total),
            rule("┏", "━", "┳", "┓"),
            line(table.headers, "┃"),
            rule("┡", "━", "╇", "┩"),
            *(line(row, "│") for row in table.rows),
            rule("└", "─", "┴", "┘"),
        ]
    )


def _plain(text: str) -> bool:
    """Printable ASCII that Rich draws as it is: no markup (``[``, ``]``, ``\\\\``) and no emoji code (``:``)."""
    return text.isascii() and text.isprintable() and not any(c in text for c in "[]\\:")


def print_plain(table: ScoreTable, stream: TextIO | None = None) -> bool:
    """Write ``table`` to ``stream`` (standard output as it is now) as Rich would, without Rich, where it is not
    a terminal and that is sure (:func:`plain_text`); ``False`` when Rich must draw it."""
    stream = sys.stdout if stream is None else stream
    encoding = (getattr(stream, "encoding", None) or "utf-8").lower()
    if is_terminal(stream) or not encoding.startswith("utf"):  # Rich draws ASCII boxes for other encodings
        return False
    text = plain_text(table, rich_width())
    if text is None:
        return False
    stream.write(text + "\n")
    stream.flush()
    return True


def print_plain_line(text: str, stream: TextIO | None = None) -> bool:
    """Write one line of plain text (``CHALLENGE: valid``) to ``stream`` as Rich would, without Rich, where it
    is not a terminal and the line is plain and fits; ``False`` when Rich must draw it.

    >>> import io
    >>> out = io.StringIO()
    >>> print_plain_line("glas: valid", out), out.getvalue(), print_plain_line("[bold]x[/bold]", out)
    (True, 'glas: valid\\n', False)
    """
    stream = sys.stdout if stream is None else stream
    if is_terminal(stream) or len(text) > rich_width() or not _plain(text.replace(": ", " ", 1)):
        return False
    stream.write(text + "\n")
    stream.flush()
    return True
