"""The organizers' commands beside the dashboard: ``dashboard``, ``rerun``, ``announce``, ``archive`` (on the database, as ``podium reveal``).

Each acts on one contest: ``--contest ID``, which may be left out when the database serves one.

Bans and approvals are ``podium team ban|unban|approve`` and ``podium user ban|unban`` (:mod:`podium.cli.service`).
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from podium.cli.commandline import database_options, guarded
from podium.cli.service import CONTEST_OPTION, _open, _served
from podium.core.errors import EXIT_SCORED, UsageError
from podium.service.statuses import utc_now


@click.command("dashboard")
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON (what GET /api/dashboard answers).")
@CONTEST_OPTION
@database_options
@guarded
def dashboard_command(as_json: bool, contest: str | None, data: Path, database: str | None) -> int:
    """The organizers' dashboard: submissions per day, active teams, the queue, the workers, failures by cause."""
    from podium.service import dashboard
    from podium.service.database import reading

    engine = _open(data, database)
    served = _served(engine, contest)
    with reading(engine) as connection:
        figures = dashboard.figures(connection, served.id, served.track_ids(), utc_now())
    if as_json:
        click.echo(json.dumps(figures, indent=1))
        return EXIT_SCORED
    today = figures["per_day"][-1]["submissions"]
    week = sum(day["submissions"] for day in figures["per_day"][-7:])
    queue, active = figures["queue"], figures["active_teams"]
    seconds = lambda value: "-" if value is None else f"{value:.1f} s"
    lines = [
        f"submissions: {today} today (UTC), {week} in the last 7 days",
        f"active teams: {active['day']} in the last 24 h, {active['week']} in the last 7 days",
        f"queue: {queue['queued']} waiting (the oldest {seconds(queue['oldest_wait_s'])}), {queue['running']} running; "
        f"last hour: {queue['ended_last_hour']} ended, median wait {seconds(queue['median_wait_s'])}, "
        f"median run {seconds(queue['median_run_s'])}",
    ]
    lines += [
        f"worker {w['worker']}: {'alive' if w['alive'] else 'silent'}, last beat {w['age_s']:.0f} s ago"
        + (f", scoring submission {w['submission']}" if w["submission"] else ", idle")
        for w in figures["workers"]
    ] or ["workers: none has written a heartbeat"]
    lines += [f"{f['status']}: {f['label']}: {f['count']}" for f in figures["failures"]]
    click.echo("\n".join(lines))
    return EXIT_SCORED


@click.command("rerun")
@click.argument("submission", type=click.IntRange(min=1))
@CONTEST_OPTION
@database_options
@guarded
def rerun_command(submission: int, contest: str | None, data: Path, database: str | None) -> int:
    """Score one submission again, in a round of its own: earlier results are kept, the board takes the new one, the team is told."""
    from podium.service.database import writing
    from podium.service.intake import Refused
    from podium.service.rescore import rerun

    engine = _open(data, database)
    chosen = _served(engine, contest).id
    try:
        with writing(engine) as connection:
            round_ = rerun(connection, chosen, submission, utc_now())
    except Refused as refused:
        raise UsageError(str(refused)) from None
    click.echo(f"submission {submission} is queued to be scored again, in round {round_}")
    return EXIT_SCORED


@click.command("announce")
@click.argument("text", required=False)
@click.option(
    "--file",
    "path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Read the announcement (Markdown) from this file.",
)
@click.option("--remove", "remove_id", type=click.IntRange(min=1), help="Remove the announcement of this id instead.")
@CONTEST_OPTION
@database_options
@guarded
def announce_command(
    text: str | None,
    path: Path | None,
    remove_id: int | None,
    contest: str | None,
    data: Path,
    database: str | None,
) -> int:
    """Post an announcement (Markdown) on the contest page, mailed to users who keep news on; or remove one."""
    from podium.service import announcements
    from podium.service.database import writing

    if sum(x is not None for x in (text, path, remove_id)) != 1:
        raise UsageError("give the announcement's TEXT, or --file F, or --remove ID")
    engine = _open(data, database)
    chosen = _served(engine, contest).id
    with writing(engine) as connection:
        if remove_id is not None:
            if not announcements.remove(connection, chosen, remove_id):
                raise UsageError(f"no announcement {remove_id}")
            click.echo(f"announcement {remove_id} is removed")
            return EXIT_SCORED
        body = text if path is None else path.read_text(encoding="utf-8", errors="replace")
        posted = announcements.post(connection, chosen, body or "", None, utc_now())
    click.echo(f"announcement {posted['id']} is on the contest page")
    return EXIT_SCORED


@click.command("archive")
@click.argument("out", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--what",
    type=click.Choice(("submissions", "results")),
    default="submissions",
    show_default=True,
    help="Every submission's files, or every result document of every round.",
)
@CONTEST_OPTION
@database_options
@guarded
def archive_command(out: Path, what: str, contest: str | None, data: Path, database: str | None) -> int:
    """Write every submission's files, or every result document, of a contest to the zip archive OUT."""
    from podium.service import exports

    engine = _open(data, database)
    served = _served(engine, contest)
    size = exports.write(engine, data, served.id, served.track_ids(), what, out, utc_now())
    click.echo(f"{out}: {size:,} bytes")
    return EXIT_SCORED


COMMANDS = (dashboard_command, rerun_command, announce_command, archive_command)
