"""``podium challenges``: one line per challenge (id, primary score and its direction, title), in plain text.

Drawn without Rich, so that the command starts in a few times a bare interpreter's time
(``benchmarks/startup.py``); one challenge's scores and parameters are Rich tables
(:func:`podium.publish.display.print_challenge`).
"""

from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

    from podium.challenges.catalog import Entry, ScoreEntry

HEADER = ("id", "primary score", "better", "title")
GAP = "  "
ELLIPSIS = "…"


def lines(entries: Iterable[Entry], width: int, detail: str) -> list[str]:
    """The listing of ``entries`` in columns, each line cut to ``width`` terminal cells (never wrapped), then how to
    ask for one challenge (``detail``: the command that takes an id, as ``podium challenges``)."""
    rows = [HEADER] + [(e["id"], e["primary"], direction(_primary(e)["higher_is_better"]), e["title"]) for e in entries]
    widths = [max(len(row[column]) for row in rows) for column in range(len(HEADER) - 1)]
    table = [GAP.join(cell.ljust(w) for cell, w in zip(row, widths)) + GAP + row[-1] for row in rows]
    return [truncate(line, width) for line in [*table, "", f"{detail} ID shows one challenge's scores and parameters."]]


def direction(higher_is_better: bool | None) -> str:
    """A score's direction as the tables name it: ``higher`` or ``lower`` is better, or nothing (a count)."""
    return "" if higher_is_better is None else "higher" if higher_is_better else "lower"


def _primary(entry: Entry) -> ScoreEntry:
    (spec,) = (spec for spec in entry["scores"] if spec["name"] == entry["primary"])
    return spec


def cells(text: str) -> int:
    """How many terminal cells ``text`` takes: two for a wide (East Asian) character, none for a combining mark."""
    return sum(_cell(char) for char in text)


def _cell(char: str) -> int:
    return 0 if unicodedata.combining(char) else 2 if unicodedata.east_asian_width(char) in "WF" else 1


def truncate(text: str, width: int) -> str:
    """``text`` if it fits in ``width`` cells; else its longest head that fits with ``…`` after it."""
    text = text.rstrip()
    if cells(text) <= width:
        return text
    kept: list[str] = []
    room = width - 1  # the ellipsis takes one cell
    for char in text:
        room -= _cell(char)
        if room < 0:
            break
        kept.append(char)
    return "".join(kept).rstrip() + ELLIPSIS
