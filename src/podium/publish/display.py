"""How results, problems and progress look in a terminal (Rich)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape as escape  # re-exported: the commands escape with display.escape
from rich.measure import Measurement
from rich.table import Table

from podium.publish.listing import direction
from podium.publish.score_table import ScoreTable, number_text

if TYPE_CHECKING:  # this module stays light (no NumPy): podium challenges and the commands' errors print through it
    from podium.challenges.base import Challenge, ScoreSpec
    from podium.challenges.catalog import Entry
    from podium.core.issues import Issue
    from podium.ranking.ranks import Team

stdout = Console(highlight=False)
stderr = Console(stderr=True, highlight=False)


def rich_table(scores: ScoreTable) -> Table:
    """A table of scores (:func:`podium.publish.score_table.score_table`) as Rich draws it on a terminal."""
    table = Table(title=scores.title, title_justify="left")
    for header, right in zip(scores.headers, scores.right):
        table.add_column(escape(header), justify="right" if right else "left")
    for row in scores.rows:
        table.add_row(*(escape(cell) for cell in row))
    return table


def command_name() -> str:
    """How to run podium again as this process was run: ``podium`` when that name on PATH is this program, else its path
    (``.venv/bin/podium`` after ``make demo``), so that every command podium prints runs as printed."""
    program = Path(sys.argv[0]).absolute()
    on_path = shutil.which("podium")
    if program.name != "podium" or (on_path is not None and Path(on_path).resolve() == program.resolve()):
        return "podium"
    try:
        return str(program.relative_to(Path.cwd()))
    except ValueError:
        return str(program)


def score_text(value: Any, decimals: int | None) -> str:
    """A score as a contest shows it: rounded to its ranking's ``decimals``, else in full; ``none`` when there is none.

    >>> score_text(0.7962962962962963, 3), score_text(0.5, None), score_text(None, 2), score_text(7, 2)
    ('0.796', '0.5', 'none', '7')
    """
    if value is None:
        return "none"
    if isinstance(value, float) and decimals is not None:
        return f"{value:.{decimals}f}"
    return str(value)


def headline(challenge: Challenge, by: str | None, scores: dict[str, Any], count: int = 3) -> list[tuple[str, Any]]:
    """The ``count`` scores a list of submissions shows: those teams are ranked by first (``by``, else the
    challenge's rule), then the others in the document's order.

    >>> from podium.challenges import get
    >>> headline(get("ilsvrc2012-cls"), None, {"error@1": 0.8, "error@5": 0.2, "top5_error": 0.2, "top1_error": 0.8})
    [('top5_error', 0.2), ('error@1', 0.8), ('error@5', 0.2)]
    >>> headline(get("ilsvrc2012-cls"), "top1_error", {"error@1": 0.8, "top5_error": 0.2, "top1_error": 0.8}, 2)
    [('top1_error', 0.8), ('error@1', 0.8)]
    """
    ranked = [by] if by is not None else [spec.name for spec in challenge.ranking_criteria(set(scores))]
    names = [name for name in ranked if name in scores] + [name for name in scores if name not in ranked]
    return [(name, scores[name]) for name in names[:count]]


def print_table(table: Table, console: Console = stdout) -> None:
    """``table`` on ``console``; not on a terminal (a pipe, a file), at its full width: no column cut to 80 characters."""
    if console.is_terminal:
        console.print(table)
        return
    width = Measurement.get(console, console.options.update(width=1 << 14), table).maximum
    Console(file=console.file, width=max(width, 20), highlight=False, no_color=True).print(table)


def print_issues(console: Console, kind: str, issues: list[Issue]) -> None:
    style = "red" if kind == "error" else "yellow"
    for issue in issues:
        console.print(f"[{style}]{kind}[/{style}] {escape(str(issue))}", soft_wrap=True)


def leaderboard(
    challenge: Challenge, teams: list[Team], criteria: list[ScoreSpec], rank_sum: bool, decimals: int | None = None
) -> Table:
    """The ranked teams as a table; scores rounded to ``decimals`` as a served board shows them (``None``: six)."""
    table = Table(title=f"{challenge.id} leaderboard", title_justify="left")
    table.add_column("rank", justify="right")
    table.add_column("team")
    for spec in criteria:
        table.add_column(f"{escape(spec.name)} ({direction(spec.higher_is_better)})", justify="right")
    if rank_sum:
        table.add_column("rank sum", justify="right")
    bootstrapped = any(t.confidence is not None for t in teams)
    if bootstrapped:
        for name in (f"{escape(criteria[0].name)} 95%", "rank 95%", "first"):
            table.add_column(name, justify="right")
    for team in teams:
        cells = [
            f"{_cell(team.scores.get(c.name), decimals)} ({team.ranks[c.name]})"
            if team.status == "scored"
            else team.status
            for c in criteria
        ]
        if rank_sum:
            cells.append(number_text(team.rank_sum))
        if bootstrapped:
            c = team.confidence
            cells += (
                ["", "", ""]
                if c is None
                else [
                    f"{number_text(c.score.low)}–{number_text(c.score.high)}",
                    f"{c.rank.low}–{c.rank.high}",
                    f"{c.first:.1%}",
                ]
            )
        table.add_row("" if team.rank is None else str(team.rank), escape(team.name), *cells)
    return table


def _cell(value: Any, decimals: int | None) -> str:
    return number_text(value) if decimals is None or value is None else score_text(value, decimals)


def print_challenge(console: Console, challenge: Entry) -> None:
    """One challenge (its catalog entry): title, rules, scores with their direction, parameters with defaults."""
    console.print(
        f"\n[bold]{challenge['id']}[/bold]: {escape(challenge['title'])}  [dim](rules: {challenge['rules']})[/dim]",
        soft_wrap=True,
    )
    scores = Table(box=None, pad_edge=False, show_header=True, header_style="dim")
    scores.add_column("score")
    scores.add_column("better")
    scores.add_column("meaning")
    for spec in challenge["scores"]:
        primary = " (primary)" if spec["name"] == challenge["primary"] else ""
        scores.add_row(
            escape(spec["name"] + ("/<class>" if spec["family"] else "")) + primary,
            direction(spec["higher_is_better"]),
            escape(spec["help"]),
        )
    console.print(scores)
    if not challenge["parameters"]:
        return
    params = Table(box=None, pad_edge=False, show_header=True, header_style="dim")
    params.add_column("--set KEY=")
    params.add_column("default")
    params.add_column("allowed")
    params.add_column("role")
    params.add_column("meaning")
    for p in challenge["parameters"]:
        default = (
            "none"
            if p["default"] is None
            else ",".join(p["default"])
            if isinstance(p["default"], list)
            else str(p["default"])
        )
        params.add_row(p["name"], escape(default), escape(p["allowed"]), p["role"], escape(p["help"]))
    console.print(params)


def print_contest(console: Console, summary: dict[str, Any]) -> None:
    """A checked contest file: what it (or each of its tracks) scores, how the test set splits, when its phases run."""
    tracks = summary.get("tracks")
    if tracks:
        console.print(
            f"[bold]{escape(summary['id'])}[/bold]: {escape(summary['title'])}, {len(tracks)} tracks, valid",
            soft_wrap=True,
        )
        for track in tracks:
            console.print(
                f"track [bold]{escape(track['id'])}[/bold]: {escape(track['title'])} ({track['challenge']})",
                soft_wrap=True,
            )
            _print_scored(console, track, "  ")
            console.print(
                "  " + _table_line("quota", track["quota"]) + ", " + _table_line("ranking", track["ranking"]),
                soft_wrap=True,
            )
    else:
        console.print(
            f"[bold]{escape(summary['id'])}[/bold]: {escape(summary['title'])} ({summary['challenge']}), valid",
            soft_wrap=True,
        )
        if summary.get("own_data", True):
            _print_scored(console, summary, "")
    console.print(f"phases (local time: {summary['timezone']}):")
    for p in summary["phases"]:
        opens = f", for {', '.join(p['tracks'])}" if "tracks" in p else ""
        quota = f"; {_table_line('its quota', p['quota'], skip_defaults=True)}" if "quota" in p else ""
        console.print(
            f"  {escape(p['name'])} ({p['submissions']}{opens}): {p['start_utc']} to {p['end_utc']} UTC, "
            f"{p['start_local']} to {p['end_local']} local{quota}",
            soft_wrap=True,
        )
    if "boards" in summary:
        console.print(
            "boards (a phase that names its own truth, split or parameters is scored and ranked on them):",
            soft_wrap=True,
        )
        for board in summary["boards"]:
            track = f" of track {escape(board['track'])}" if "track" in board else ""
            console.print(f"  {', '.join(escape(p) for p in board['phases'])}{track}:", soft_wrap=True)
            _print_scored(console, board, "    ")
    for name in ("limits", "quota", "ranking", "service") if not tracks else ("limits", "service"):
        console.print(_table_line(name, summary[name]), soft_wrap=True)
    if "pages" in summary:
        console.print(f"pages: {escape(', '.join(summary['pages']))}", soft_wrap=True)
    if "data" in summary:
        files, links = len(summary["data"]["files"]), len(summary["data"]["links"])
        console.print(f"data: {files} file{'s' * (files != 1)}, {links} link{'s' * (links != 1)}", soft_wrap=True)
    for track, kit in summary.get("kits", {}).items():
        console.print(f"kit of {escape(track)}: {kit['items']} sample items in {escape(kit['truth'])}", soft_wrap=True)


def _print_scored(console: Console, scored: dict[str, Any], indent: str) -> None:
    """What a contest, or one of its tracks, scores: its truth, split and parameters."""
    console.print(f"{indent}truth: {escape(scored['truth'])}, {scored['units']:,} units", soft_wrap=True)
    split = scored["split"]
    if split is None:
        console.print(f"{indent}split: none, the whole test set is public")
    else:
        rule = (
            f"public = {split['public']}, seed = {split['seed']}"
            if "public" in split
            else f"public_list = {escape(split['public_list'])}"
        )
        console.print(
            f"{indent}split: {rule}: {split['public_units']:,} public, {split['private_units']:,} private units ({split['fingerprint'][:19]})",
            soft_wrap=True,
        )
    if scored["parameters"]:
        console.print(
            f"{indent}parameters: " + ", ".join(f"{k}={escape(v)}" for k, v in scored["parameters"].items()),
            soft_wrap=True,
        )


def _table_line(name: str, table: dict[str, Any], skip_defaults: bool = False) -> str:
    """A table of the contest file on one line: ``quota: per_day=5, total=default``."""
    return f"{name}: " + ", ".join(
        f"{k}={'default' if v is None else v}" for k, v in table.items() if not (skip_defaults and v is None)
    )
