"""The layout of docs/layout.md: no import runs back up the flow, and the picture is the code's."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import import_graph  # noqa: E402  (tools/ is no package)


def _lint_imports(config: Path) -> subprocess.CompletedProcess[str]:
    command = [str(Path(sys.executable).parent / "lint-imports"), "--no-cache", "--config", str(config)]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_the_contract_holds_and_an_arrow_against_its_floors_breaks_it(tmp_path: Path) -> None:
    config = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    kept = _lint_imports(ROOT / "pyproject.toml")
    assert kept.returncode == 0 and "2 kept, 0 broken" in kept.stdout, kept.stdout
    swapped = tmp_path / "pyproject.toml"  # metrics above formats: every reader's import of a metric now runs back up
    swapped.write_text(
        config.replace('    "formats",\n    "metrics",\n', '    "metrics",\n    "formats",\n'), encoding="utf-8"
    )
    assert swapped.read_text(encoding="utf-8") != config
    broken = _lint_imports(swapped)
    assert broken.returncode == 1 and "podium.formats is not allowed to import podium.metrics" in broken.stdout, (
        broken.stdout
    )


def test_no_import_runs_back_up_and_the_picture_is_the_code_s() -> None:
    graph = grimp.build_graph("podium", include_external_packages=False)
    order = [import_graph.ENTRANCES, *import_graph.floors()]
    level = {name: k for k, rooms in enumerate(order) for name in rooms}
    found = import_graph.arrows(graph)
    assert {room for pair in found for room in pair} <= set(level), "a room that no floor of the contract holds"
    assert [(s, t) for s, t in found if level[s] >= level[t]] == []
    # the one circle left is the service's app <-> pages, untied by the service's own rework (issue 37 cause 3)
    assert all(module.startswith("podium.service.") for circle in import_graph.circles(graph) for module in circle)
    drawn = (ROOT / "docs" / "layout.svg").read_text(encoding="utf-8")
    assert drawn == import_graph.svg(order, import_graph.reduced(found)), (
        "docs/layout.svg is not the code's graph: python tools/import_graph.py --svg docs/layout.svg"
    )
