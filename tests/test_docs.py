"""The documentation: the README stays short, the site's strict build refuses what it should, and the benchmarks' table
names every script and nothing else."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_readme_is_short() -> None:
    assert len((ROOT / "README.md").read_text().splitlines()) <= 250


def test_the_strict_build_fails_on_a_broken_link_a_missing_anchor_and_a_page_out_of_the_nav(tmp_path: Path) -> None:
    """``make test`` builds the site with ``mkdocs build --strict``; each mistake below must stop it, named."""
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    with (tmp_path / "docs" / "limits.md").open("a") as page:
        page.write("\nSee [the runner](no-such-page.md) and [the exit codes](commands.md#no-such-section).\n")
    (tmp_path / "docs" / "orphan.md").write_text("# A page no one listed\n")
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=300,
    )
    assert build.returncode != 0, build.stderr
    assert "'no-such-page.md'" in build.stderr and "'#no-such-section'" in build.stderr, build.stderr
    assert "orphan.md" in build.stderr and 'not included in the "nav"' in build.stderr, build.stderr


def test_the_site_loads_nothing_from_another_host(tmp_path: Path) -> None:
    """The built pages name no script, style sheet or font of another host (Material's Google fonts are off: font: false)."""
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=300,
    )
    assert build.returncode == 0, build.stderr
    pages = list(tmp_path.rglob("*.html"))
    assert len(pages) >= 14
    for page in pages:
        remote = re.findall(r"""<(?:script|link|img)[^>]*(?:src|href)=["']?(?:https?:)?//[^"' >]+""", page.read_text())
        assert remote == [], (page, remote)


def benchmark_scripts() -> set[str]:
    """The scripts of ``benchmarks/``: the files run as programs (``timing.py`` and the like are their helpers)."""
    return {
        path.name for path in (ROOT / "benchmarks").glob("*.py") if 'if __name__ == "__main__":' in path.read_text()
    }


def test_the_benchmarks_table_has_a_row_for_every_script_and_no_other() -> None:
    text = (ROOT / "benchmarks" / "README.md").read_text()
    table = text[text.index("## Current figures") :]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    named = {re.match(r"\| `([^`]+)`", row).group(1) for row in rows}  # type: ignore[union-attr]
    assert named == benchmark_scripts()
    how_to_run = text[: text.index("## Current figures")]
    for script in benchmark_scripts():
        assert f"benchmarks/{script}" in how_to_run, f"{script} has no line saying how to run it"
