"""The import graph of ``src/podium`` by room (a top-level package or module), from the code's real imports (grimp).

``python tools/import_graph.py``          the rooms in flow order, the arrows between them, back arrows and circles
``python tools/import_graph.py --svg F``  also draw the rooms and arrows as an SVG (docs/layout.svg)

The flow order is the layers contract of pyproject.toml's ``[tool.importlinter]`` (``FLOORS`` reads it), so the
count here and ``lint-imports`` judge by the same floors: an arrow "runs back up" when it goes from a lower
floor to a higher one; a circle is a set of modules that import each other (a strongly connected component).
"""

from __future__ import annotations

import argparse
import html
import sys
import tomllib
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parent.parent
ENTRANCES = [
    "__main__",
    "__init__",
]  # python -m podium and import podium: the doors, above every floor (no contract names them)


def floors() -> list[list[str]]:
    """The contract's layers, top first: each a list of rooms side by side (``a | b``)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    layers = next(c for c in config["contracts"] if c["type"] == "layers")["layers"]
    return [[room.strip() for room in layer.replace(":", "|").split("|") if room.strip()] for layer in layers]


def room(module: str) -> str:
    """``podium.scoring.engine`` -> ``scoring``; ``podium`` -> ``__init__``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def arrows(graph: grimp.ImportGraph) -> set[tuple[str, str]]:
    """Room-level imports (lazy ones inside functions included, as grimp finds them)."""
    found = set()
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            if imported.startswith("podium") and room(module) != room(imported):
                found.add((room(module), room(imported)))
    return found


def circles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Module-level import circles: Tarjan's strongly connected components of more than one module."""
    modules = sorted(m for m in graph.modules if m.startswith("podium"))
    edges = {
        m: sorted(i for i in graph.find_modules_directly_imported_by(m) if i.startswith("podium")) for m in modules
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    sys.setrecursionlimit(10_000)

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in edges.get(node, []):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in modules:
        if module not in index:
            visit(module)
    return found


def reduced(found: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """The arrows no longer way implies (a -> c is left out where a -> b -> ... -> c): the picture's arrows."""
    successors: dict[str, set[str]] = {}
    for source, target in found:
        successors.setdefault(source, set()).add(target)

    def reaches(start: str, goal: str, skip: tuple[str, str]) -> bool:
        seen, todo = set(), [start]
        while todo:
            node = todo.pop()
            for succ in successors.get(node, ()):
                if (node, succ) != skip and succ not in seen:
                    if succ == goal:
                        return True
                    seen.add(succ)
                    todo.append(succ)
        return False

    return {(s, t) for s, t in found if not reaches(s, t, (s, t))}


def svg(order: list[list[str]], drawn: set[tuple[str, str]]) -> str:
    """Rooms as boxes, floor by floor (top first), and the arrows between rooms that no longer way implies."""
    width, box_w, box_h, gap = 900, 120, 34, 56
    where: dict[str, tuple[float, float]] = {}
    for level, rooms in enumerate(order):
        step = width / (len(rooms) + 1)
        for k, name in enumerate(rooms):
            where[name] = (step * (k + 1), 30 + level * gap)
    height = 30 + len(order) * gap
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="13">',
        '<defs><marker id="a" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" orient="auto"><path d="M0,0L10,5L0,10z" fill="#667"/></marker></defs>',
    ]
    for source, target in sorted(drawn):
        if source in where and target in where:
            (x1, y1), (x2, y2) = where[source], where[target]
            parts.append(
                f'<line x1="{x1:.0f}" y1="{y1 + box_h / 2:.0f}" x2="{x2:.0f}" y2="{y2 - box_h / 2:.0f}" stroke="#99a" stroke-width="1" marker-end="url(#a)"/>'
            )
    for name, (x, y) in where.items():
        parts.append(
            f'<rect x="{x - box_w / 2:.0f}" y="{y - box_h / 2:.0f}" width="{box_w}" height="{box_h}" rx="4" fill="#dde6f0" stroke="#3a6ea5"/>'
        )
        parts.append(f'<text x="{x:.0f}" y="{y + 4:.0f}" text-anchor="middle">{html.escape(name)}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--svg", type=Path, help="write the picture of the flow here")
    args = parser.parse_args()
    graph = grimp.build_graph("podium", include_external_packages=False)
    order = [ENTRANCES, *floors()]
    level = {name: k for k, rooms in enumerate(order) for name in rooms}
    found = arrows(graph)
    back = sorted((s, t) for s, t in found if s in level and t in level and level[s] >= level[t] and s != t)
    unplaced = sorted({r for pair in found for r in pair} - set(level))
    loops = circles(graph)
    print(f"{len(level) - len(ENTRANCES)} rooms on {len(order) - 1} floors, {len(found)} arrows between rooms")
    print(f"back arrows (same floor or up): {len(back)}" + "".join(f"\n  {s} -> {t}" for s, t in back))
    print(f"circles: {len(loops)}" + "".join(f"\n  {' <-> '.join(c)}" for c in loops))
    if unplaced:
        print(f"rooms on no floor: {', '.join(unplaced)}")
    if args.svg:
        args.svg.write_text(svg(order, reduced(found)), encoding="utf-8")
    return 1 if back or loops or unplaced else 0


if __name__ == "__main__":
    sys.exit(main())
