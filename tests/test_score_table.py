"""The table of scores drawn without Rich for a pipe or a file is, character for character, the one Rich draws
(issue 40, goal 1: ``podium evaluate`` piped to a program loads no Rich)."""

from __future__ import annotations

import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from podium.challenges import get
from podium.publish import display
from podium.publish.score_table import ScoreTable, plain_text, score_table
from podium.synthetic.ilsvrc2012 import write_classification

WORDS = [
    "error@1",
    "top5_error",
    "AP/class_7",
    "mAP",
    "f[1]",
    "a b",
    "x" * 30,
    "nmi",
    "[bold]b[/bold]",
    "\\",
    "é",
    ":ok:",
]


def _rich(table: ScoreTable, width: int) -> str:
    console = Console(file=StringIO(), width=width, highlight=False)
    console.print(display.rich_table(table))
    return console.file.getvalue()  # type: ignore[attr-defined]


def _random_table(rng: np.random.Generator) -> ScoreTable:
    columns = [str(rng.choice(["value", "public", "private", "whole"])) for _ in range(int(rng.integers(1, 4)))]
    rows = []
    for _ in range(int(rng.integers(1, 8))):
        cells = [str(rng.choice(["null", "0.123456", "12", "-1.500000", "1234567.000000"])) for _ in columns]
        rows.append((str(rng.choice(WORDS)), *cells, str(rng.choice(["lower", "higher", ""]))))
    title = f"{rng.choice(['ilsvrc2012-cls', 'a-very-long-challenge-name-indeed-x'])}: {rng.choice(['scored', 'x'])}"
    return ScoreTable(title, ("score", *columns, "better"), (False, *(True for _ in columns), False), tuple(rows))


@pytest.mark.parametrize("seed", range(60))
def test_the_plain_table_is_richs_or_declines(seed: int) -> None:
    rng = np.random.default_rng(seed)
    table = _random_table(rng)
    width = int(rng.choice([20, 40, 80, 200]))
    text = plain_text(table, width)
    if text is not None:
        assert text + "\n" == _rich(table, width)
    elif all(c.isascii() and c.isprintable() and not set(c) & set("[]\\:") for row in table.rows for c in row):
        assert len(_rich(table, 1000).splitlines()[1]) > width or len(table.title) > len(
            _rich(table, 1000).splitlines()[1]
        ), "declined a table it can draw"


PIPED = (
    "import sys; from podium.cli import main\n"
    "split = sys.argv.index('--'); unused = set(sys.argv[1:split]); sys.argv[1:] = sys.argv[split + 1 :]\n"
    "try: main()\n"
    "except SystemExit as exc: print(exc.code, *sorted({m.split('.')[0] for m in sys.modules} & unused), file=sys.stderr)"
)  # runs podium with the arguments after --, and prints its exit code and the modules named before -- that it loaded


def test_validate_piped_prints_richs_status_line_without_rich(tmp_path: Path) -> None:
    demo = write_classification(tmp_path, 200, seed=3)
    args = ["validate", "ilsvrc2012-cls", "--truth", str(demo.truth), "--submission", str(demo.submission)]
    environment = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "FORCE_COLOR", "TTY_COMPATIBLE")}
    done = subprocess.run(
        [sys.executable, "-c", PIPED, "rich", "numpy", "--", *args],
        capture_output=True,
        text=True,
        env=environment,
        stdin=subprocess.DEVNULL,
    )
    assert done.stderr.split() == ["0"], f"modules a piped Task 1 validation does not need: {done.stderr}"
    console = Console(file=StringIO(), width=80, highlight=False)
    console.print("ilsvrc2012-cls: [bold]valid[/bold]")
    assert done.stdout == console.file.getvalue() == "ilsvrc2012-cls: valid\n"  # type: ignore[attr-defined]


def test_evaluate_piped_prints_richs_table_and_loads_only_what_it_uses(tmp_path: Path) -> None:
    demo = write_classification(tmp_path, 200, seed=3)
    submission = demo.submission / "team.txt"
    args = ["evaluate", "ilsvrc2012-cls", "--truth", str(demo.truth), "--submission", str(submission)]
    unused = ["rich", "tempfile", "shutil", "difflib", "traceback", "numba", "numpy"]
    environment = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "FORCE_COLOR", "TTY_COMPATIBLE")}
    done = subprocess.run(
        [sys.executable, "-c", PIPED, *unused, "--", *args],
        capture_output=True,
        text=True,
        env=environment,
        stdin=subprocess.DEVNULL,
    )
    assert done.stderr.split() == ["0"], f"modules a piped Task 1 evaluation does not need: {done.stderr}"
    from podium import evaluate

    result = evaluate("ilsvrc2012-cls", demo.truth, submission)
    assert done.stdout == _rich(score_table(get("ilsvrc2012-cls"), result), 80)
