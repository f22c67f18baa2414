"""The report page's per-item table: each image's (or photo's) numbers from the result's details, sortable without JavaScript.

The details a team may see are those of its view: the public split's until
the reveal, the whole test set's after it (and for organizers). A table
holds at most :data:`SHOWN` rows, the first ones of the chosen order; the
JSON has them all.

>>> table = per_item({"details": {"per_image": {"b": {"f1": 0.5, "part": "x"}, "a": {"f1": 0.9, "part": "x"}}}}, "-f1")
>>> table.columns, [row[0] for row in table.rows], table.sort
(['f1', 'part'], ['a', 'b'], '-f1')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

SHOWN = 500
KEYS = ("per_image", "per_photo")


@dataclass(frozen=True)
class Table:
    title: str  # "per image"
    columns: list[str]
    rows: list[list[Any]]  # [name, *values]
    total: int
    sort: str | None  # a column, "-column" for descending, None: by name


def _details(document: dict[str, Any]) -> dict[str, Any]:
    if document.get("view") == "public" and document.get("splits"):
        return (document["splits"].get("public") or {}).get("details") or {}
    return document.get("details") or {}


def per_item(document: dict[str, Any] | None, sort: str | None) -> Table | None:
    """The per-item table of ``document`` in the order ``sort`` asks (``None`` when it has none)."""
    details = _details(document or {})
    key = next((k for k in KEYS if isinstance(details.get(k), dict) and details[k]), None)
    if key is None:
        return None
    items: dict[str, Any] = details[key]
    columns = (
        [c for c in next(iter(items.values())) if isinstance(c, str)]
        if isinstance(next(iter(items.values())), dict)
        else []
    )
    column = (sort or "").lstrip("-")
    names = sorted(items)
    if column in columns:
        present = [n for n in names if items[n].get(column) is not None]
        present.sort(
            key=lambda n: (isinstance(items[n][column], str), items[n][column]), reverse=(sort or "").startswith("-")
        )
        names = present + [n for n in names if items[n].get(column) is None]  # none last, either way
    else:
        sort = None
    rows = [[name, *(items[name].get(c) for c in columns)] for name in names[:SHOWN]]
    return Table(key.replace("_", " "), columns, rows, len(items), sort)
