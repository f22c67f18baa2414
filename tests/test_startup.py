"""The commands that compute nothing start light (issue 40, goal 1): ``podium --help``, ``--version``, ``challenges``
and a command's ``--help`` load neither NumPy nor the contest reader nor the service, and what they print is what
the real commands and challenge classes say (``benchmarks/startup.py`` measures the time)."""

from __future__ import annotations

import importlib
import json
import os
import re
import subprocess
import sys
from importlib.metadata import entry_points
from io import StringIO
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from rich.console import Console

from podium.challenges import IDS, every
from podium.challenges.catalog import Entry, describe, entries
from podium.cli import cli, organizer, platforms, scoring, service
from podium.cli.commandline import LISTED, Listed
from podium.publish import display, listing

HEAVY = (
    "numpy",
    "pydantic",
    "fastapi",
    "starlette",
    "sqlalchemy",
    "jinja2",
    "zipfile",
    "subprocess",
    "podium.contest",
    "podium.challenges.base",
    "podium.scoring",
)
MARK = "--- modules ---"
# runs the console script's function as the installed `podium` does, then prints every module it loaded
WRAPPER = """import importlib, json, sys
module, attribute, *sys.argv[1:] = sys.argv[1:]
sys.argv[0] = "podium"
try:
    getattr(importlib.import_module(module), attribute)()
except SystemExit as exc:
    code = exc.code
print({mark!r}, json.dumps(sorted(sys.modules)), code, file=sys.stderr)
"""


def _run(*args: str, columns: int = 80) -> tuple[str, set[str], object]:
    """``podium ARGS`` through its console entry point in a new interpreter: its output, the modules it loaded, its exit code."""
    (script,) = entry_points(group="console_scripts", name="podium")
    module, attribute = script.value.split(":")
    done = subprocess.run(
        [sys.executable, "-c", WRAPPER.format(mark=MARK), module, attribute, *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "COLUMNS": str(columns)},
    )
    assert done.returncode == 0, done.stderr
    _, _, tail = done.stderr.rpartition(MARK)
    modules, code = tail.rsplit(maxsplit=1)
    return done.stdout, set(json.loads(modules)), code


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["--version"],
        ["challenges"],
        ["challenges", "--json"],
        ["challenges", "glas"],
        ["contest", "--help"],
        ["serve", "--help"],
        ["evaluate", "--help"],
    ],
)
def test_commands_that_compute_nothing_load_nothing_heavy(args: list[str]) -> None:
    output, modules, code = _run(*args)
    assert code in ("0", "None") and output
    assert not modules & set(HEAVY), sorted(modules & set(HEAVY))
    if args != ["challenges", "glas"]:  # only one challenge's tables are drawn with Rich
        assert not any(m == "rich" or m.startswith("rich.") for m in modules)


def test_podium_challenges_lists_what_the_challenge_classes_say() -> None:
    """The catalog equals the classes (else: python tools/challenge_catalog.py); the listing shows, one line each, every
    challenge's id, primary score, its direction and title, and how to see one; at 80 columns each line is cut, not wrapped."""
    assert [entry["id"] for entry in entries()] == list(IDS)
    assert list(entries()) == [json.loads(json.dumps(describe(challenge))) for challenge in every()], (
        "run python tools/challenge_catalog.py"
    )
    wide, _, _ = _run("challenges", columns=400)
    *table, blank, hint = wide.splitlines()
    assert [re.split(r"  +", line) for line in table] == [
        ["id", "primary score", "better", "title"],
        *(
            [c.id, c.primary, "higher" if c.score_spec(c.primary).higher_is_better else "lower", c.title]
            for c in every()
        ),
    ]
    assert blank == "" and hint == "podium challenges ID shows one challenge's scores and parameters."
    starts = [table[0].index(name) for name in ("primary score", "better", "title")]
    assert all(line[start - 2 : start] == "  " and line[start] != " " for line in table for start in starts)  # aligned
    narrow, _, _ = _run("challenges", columns=80)
    assert len(narrow.splitlines()) == len(wide.splitlines())
    for cut, whole in zip(narrow.splitlines(), wide.splitlines()):
        kept = cut[:-1]  # as much of the line as fits beside the ellipsis, less the spaces at its end
        assert (
            cut == whole
            if len(whole) <= 80
            else cut.endswith("…") and whole.startswith(kept) and whole[len(kept) : 79].strip() == ""
        )
    assert any(cut.endswith("…") for cut in narrow.splitlines())


@pytest.mark.parametrize("challenge_id", IDS)
def test_podium_challenges_id_prints_its_tables(challenge_id: str) -> None:
    """``podium challenges ID`` draws the challenge's scores and parameters as the Rich tables always did, and ``--json`` its entry."""
    (challenge,) = (c for c in every() if c.id == challenge_id)
    output, _, _ = _run("challenges", challenge_id)
    expected = Console(file=StringIO(), width=80, highlight=False)
    display.print_challenge(expected, json.loads(json.dumps(describe(challenge))))
    assert output == expected.file.getvalue()  # type: ignore[attr-defined]
    output, _, _ = _run("challenges", challenge_id, "--json")
    assert json.loads(output) == _public(describe(challenge))


def test_podium_challenges_json_describes_every_challenge() -> None:
    output, _, _ = _run("challenges", "--json")
    assert json.loads(output) == [_public(describe(challenge)) for challenge in every()]


def _public(entry: Entry) -> dict[str, object]:
    """What ``--json`` shows of a catalog entry: as JSON writes it, without the scores' ``family``."""
    shown = json.loads(json.dumps(entry))
    return {**shown, "scores": [{k: v for k, v in spec.items() if k != "family"} for spec in shown["scores"]]}


@pytest.mark.parametrize(
    ("text", "width", "shown"),
    [
        ("glas  f1", 8, "glas  f1"),
        ("glas  f1", 7, "glas…"),
        ("glas  f1", 5, "glas…"),
        ("日本語abc", 9, "日本語abc"),
        ("日本語abc", 8, "日本語a…"),
        ("日本語abc", 5, "日本…"),
        ("日本語abc", 4, "日…"),
        ("e\u0301te\u0301", 3, "e\u0301te\u0301"),
        ("trailing   ", 8, "trailing"),
    ],
)
def test_a_line_is_cut_by_terminal_cells(text: str, width: int, shown: str) -> None:
    assert listing.truncate(text, width) == shown
    assert listing.cells(shown) <= width


def test_the_listing_names_every_command_where_it_is() -> None:
    """LISTED holds every command of the families, where it is defined and with its help's first paragraph."""
    families = {family.__name__: family for family in (scoring, service, platforms, organizer)}
    real = {}
    for name, family in families.items():
        for command in family.COMMANDS:
            attribute = next(key for key, value in vars(family).items() if value is command)
            real[command.name] = (f"{name}:{attribute}", " ".join(command.help.split("\n\n")[0].split()))
    assert real == LISTED, (
        "a command was added, moved or its help changed: write its row of LISTED in podium/cli/commandline.py"
    )
    for name, (where, _) in LISTED.items():
        module, attribute = where.split(":")
        assert getattr(importlib.import_module(module), attribute).name == name


@pytest.mark.parametrize("width", [40, 60, 80, 120, 200])
def test_help_lists_the_commands_as_click_does(width: int) -> None:
    """``podium --help`` (commands not imported) equals click's own listing of the imported commands, at every width."""
    eager = click.Group(
        cli.name, params=cli.params, callback=cli.callback, help=cli.help, context_settings=cli.context_settings
    )
    for family in (scoring, service, platforms, organizer):
        for command in family.COMMANDS:
            eager.add_command(command)
    lazy = Listed(
        cli.name, params=cli.params, callback=cli.callback, help=cli.help, context_settings=cli.context_settings
    )
    runner = CliRunner()
    shown = runner.invoke(lazy, ["--help"], prog_name="podium", terminal_width=width)
    assert shown.exit_code == 0
    assert shown.output == runner.invoke(eager, ["--help"], prog_name="podium", terminal_width=width).output
    assert not lazy.commands  # listed without importing a command
    assert runner.invoke(lazy, ["challenges", "--json"]).exit_code == 0 and list(lazy.commands) == ["challenges"]


def test_the_docs_show_the_listing_as_it_prints() -> None:
    page = (Path(__file__).resolve().parents[1] / "docs" / "commands.md").read_text(encoding="utf-8")
    output, _, _ = _run("challenges", columns=80)
    assert "".join(("        " + line if line else "") + "\n" for line in output.splitlines()) in page, (
        "paste podium challenges (80 columns) in docs/commands.md"
    )
