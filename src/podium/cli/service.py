"""The service's commands: ``serve``, ``worker``, ``team``, ``user``, ``token``, ``reveal``, ``rescore``, ``migrate``, ``backup``, ``restore``
(the organizers' dashboard and its actions: :mod:`podium.cli.organizer`)
(on the database),
and ``submit``, ``status``, ``leaderboard`` (clients of a running server).

Heavy imports (FastAPI, SQLAlchemy, the contest reader, Rich) happen inside the commands,
so that ``podium --help`` does not pay for them.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from podium._version import __version__
from podium.cli.commandline import CGROUP_OPTION, SANDBOX_OPTION, SCHEDULER_OPTION, database_options, guarded
from podium.core.errors import EXIT_REJECTED, EXIT_SCORED, PodiumError, UsageError
from podium.service.statuses import FINAL, NOT_SCORED_BY_THE_TEAMS_FAULT, utc_now

if TYPE_CHECKING:
    from podium.contest import Contest


def client_options(command: Any) -> Any:
    for option in reversed(
        [
            click.option(
                "--server",
                metavar="URL",
                envvar="PODIUM_SERVER",
                required=True,
                help="The service, e.g. http://127.0.0.1:8000 [env PODIUM_SERVER].",
            ),
            click.option("--json", "as_json", is_flag=True, help="Print the server's JSON answer."),
        ]
    ):
        command = option(command)
    return command


TOKEN_OPTION = click.option(
    "--token", envvar="PODIUM_TOKEN", required=True, help="Your team's API token [env PODIUM_TOKEN]."
)


def _open(data: Path, database: str | None, contest: Contest | None = None, *, renaming: bool = False) -> Any:
    """The database engine, migrated; with ``contest``, tied to that contest.

    ``renaming``: for the commands that rename, which also run on a database whose upgrade stopped at names
    differing only in case (migration 0009 names them), to rename them.
    """
    from podium.service.database import DuplicateNames, connect, database_url, migrate
    from podium.service.server import register_contest

    data.mkdir(parents=True, exist_ok=True)
    engine = connect(database_url(database, data))
    try:
        migrate(engine)
    except DuplicateNames:
        if not renaming:
            raise
    if contest is not None:
        register_contest(engine, contest)
    return engine


def open_database(data: Path, database: str | None) -> Any:
    """The database engine of ``--data`` and ``--database``, migrated."""
    return _open(data, database)


def _load(contest_path: Path | None) -> Contest | None:
    from podium.contest import load

    return None if contest_path is None else load(contest_path)


WILDCARD_HOSTS = (
    "0.0.0.0",
    "::",
    "[::]",
    "",
)  # --host values meaning every interface: an address to listen on, not to link to


def mail_options(from_environment: bool) -> Any:
    """``--smtp``, ``--mail-from``, ``--smtp-starttls``, ``--smtp-cafile``: ``podium serve`` also reads them from ``PODIUM_``
    variables; ``podium worker`` only as given, since the workers ``podium serve`` starts inherit its environment."""

    def option(name: str, variable: str, help: str, **kwargs: Any) -> Any:
        if from_environment:
            return click.option(name, envvar=variable, help=f"{help} [env {variable}].", **kwargs)
        return click.option(name, help=f"{help}.", **kwargs)

    options = [
        option(
            "--smtp",
            "PODIUM_SMTP",
            "Send e-mail notifications through this SMTP server (log-in: env PODIUM_SMTP_USER and PODIUM_SMTP_PASSWORD)",
            metavar="HOST:PORT",
            default=None,
        ),
        option("--mail-from", "PODIUM_MAIL_FROM", "The notifications' sender", metavar="ADDRESS", default=None),
        option("--smtp-starttls", "PODIUM_SMTP_STARTTLS", "Upgrade the SMTP connection with STARTTLS", is_flag=True),
        option(
            "--smtp-cafile",
            "PODIUM_SMTP_CAFILE",
            "The certificate authorities trusted for STARTTLS (default: the system's)",
            type=click.Path(exists=True, dir_okay=False),
            default=None,
        ),
    ]

    def decorate(command: Any) -> Any:
        for each in reversed(options):
            command = each(command)
        return command

    return decorate


def smtp_of(smtp: str | None, mail_from: str | None, starttls: bool, cafile: str | None) -> Any:
    """The SMTP settings :func:`mail_options` give (``None`` without ``--smtp``); :class:`UsageError` when they are wrong."""
    from podium.service import mail

    if smtp is None:
        return None
    user, password = os.environ.get("PODIUM_SMTP_USER"), os.environ.get("PODIUM_SMTP_PASSWORD")
    return mail.parse_smtp(smtp, mail_from, user, password, starttls, cafile)


LOG_FORMAT_OPTION = click.option(
    "--log-format",
    type=click.Choice(("text", "json")),
    envvar="PODIUM_LOG_FORMAT",
    default="text",
    show_default=True,
    help="Logs on stderr: text, or one JSON object per line with the request's or job's id [env PODIUM_LOG_FORMAT].",
)


def _read_folder(folder: Path) -> list[Contest]:
    """The contests of ``folder`` that read; each file that does not is reported on stderr (it names its line) and left out."""
    from podium.publish import display
    from podium.service.server import read_folder

    served, problems = read_folder(folder)
    for problem in problems:
        display.stderr.print(f"[yellow]not served:[/yellow] {display.escape(problem)}", soft_wrap=True)
    if not served:
        raise UsageError(f"{folder}: no contest file reads (each NAME/contest.toml, and each *.toml at its top)")
    return served


def _reload(engine: Any) -> None:
    """Read the served folder again (SIGHUP): what changed is logged, a file that does not read named with its line."""
    import logging

    from podium.service.server import reload_folder

    log = logging.getLogger("podium.serve")
    try:
        served, _problems, withdrawn = reload_folder(engine)  # the problems are logged as warnings
    except Exception:
        log.exception("the reload of the contests failed")
        return
    log.info("reloaded: serving %s; withdrawn: %s", ", ".join(served) or "none", ", ".join(withdrawn) or "none")


def folder_banner(served: list[Contest], address: str, data: Path, workers: int) -> str:
    """What ``podium serve --contests`` prints first: the home page, and each contest's pages."""
    from podium.publish import display

    lines = [
        f"podium serves {len(served)} contests at {address}/ with {workers} worker{'s' * (workers != 1)}; data in {data.resolve()}"
    ]
    lines += [
        f"  {display.escape(c.title or c.id)}: {address}/c/{c.id}/ (the API: {address}/api/contests/{c.id}/)"
        for c in served
    ]
    podium = display.command_name()
    lines.append(
        f"  add a team: {podium} team add NAME --contest ID --data {data}; reload the folder: {podium} contest reload --data {data}"
    )
    return "\n".join(lines)


def serve_banner(contest: Contest, address: str, data: Path, workers: int, database: bool) -> str:
    """What ``podium serve`` prints first: where the contest is served, and the commands that run as printed."""
    from podium.publish import display

    podium = display.command_name()
    return (
        f"podium serves [bold]{display.escape(contest.title)}[/bold] ({contest.id}) at {address}/ with {workers} worker{'s' * (workers != 1)}; "
        f"data in {data.resolve()}\n  the contest's pages: {address}/ (log in as a user: {podium} user add NAME --team TEAM --data {data})"
        f"\n  the API and its documentation: {address}/docs\n  the leaderboard: {address}/leaderboard, {address}/api/leaderboard "
        f"or {podium} leaderboard --server {address}\n  add a team: {podium} team add NAME --data {data}"
        + (" --database URL" if database else "")
    )


@click.command("serve")
@click.option(
    "--contest",
    "contest_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="The contest file (one contest; or give --contests).",
)
@click.option(
    "--contests",
    "contests_folder",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="A folder of contests, served together under /c/ID/: each NAME/contest.toml in it, and each *.toml at its top (docs/many-contests.md).",
)
@database_options
@click.option(
    "--host", default="127.0.0.1", show_default=True, help="The address to listen on (0.0.0.0: every interface)."
)
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True)
@click.option(
    "--workers",
    type=click.IntRange(min=0),
    default=1,
    show_default=True,
    help="Scoring workers on this machine (0: only remote ones).",
)
@click.option(
    "--worker-nice",
    type=click.IntRange(0, 19),
    default=10,
    show_default=True,
    help="The CPU priority at which the workers score files (0 to 19, nice(1)'s): a burst of uploads is taken at once while the queue drains behind it; programs run at normal priority (docs/operations.md).",
)
@SANDBOX_OPTION
@CGROUP_OPTION
@SCHEDULER_OPTION
@click.option(
    "--allow-images",
    is_flag=True,
    help="Take Docker images as program submissions (needs a Docker engine on every worker).",
)
@click.option(
    "--web-processes",
    type=click.IntRange(1, 64),
    default=1,
    show_default=True,
    help="Web processes answering on the one port (each with its own board and check processes; see docs/operations.md).",
)
@click.option(
    "--check-processes",
    "check_processes_given",
    type=click.IntRange(min=0),
    default=None,
    help="Processes that check uploads beside the web process (0: in it) [default: one per core left by the web process and the workers, at most 4].",
)
@click.option(
    "--team",
    "team_names",
    multiple=True,
    metavar="NAME",
    help="Add this team if it is new and print a token for it (repeatable).",
)
@click.option(
    "--trusted-proxy",
    "trusted_proxies",
    multiple=True,
    metavar="ADDRESS",
    envvar="PODIUM_TRUSTED_PROXIES",
    help="A reverse proxy (address or network) whose X-Forwarded-For and X-Forwarded-Proto are believed (repeatable) [env PODIUM_TRUSTED_PROXIES, comma separated].",
)
@click.option(
    "--public-url",
    metavar="URL",
    envvar="PODIUM_PUBLIC_URL",
    default=None,
    help="Where the contest is reached behind a reverse proxy that strips the path, e.g. https://example.org/contest/: every link, redirect, cookie and printed address uses it [env PODIUM_PUBLIC_URL].",
)
@mail_options(from_environment=True)
@LOG_FORMAT_OPTION
@guarded
def serve_command(
    contest_path: Path | None,
    contests_folder: Path | None,
    data: Path,
    database: str | None,
    host: str,
    port: int,
    workers: int,
    worker_nice: int,
    sandbox: str,
    cgroup: Path | None,
    scheduler: str | None,
    allow_images: bool,
    web_processes: int,
    check_processes_given: int | None,
    team_names: tuple[str, ...],
    trusted_proxies: tuple[str, ...],
    public_url: str | None,
    smtp: str | None,
    mail_from: str | None,
    smtp_starttls: bool,
    smtp_cafile: str | None,
    log_format: str,
) -> int:
    """Serve a contest (or a folder of contests): the web API, the leaderboard and N scoring workers."""
    import uvicorn

    from podium.contest import load
    from podium.publish import display
    from podium.scoring import distributed
    from podium.service import logs, mail, state
    from podium.service.app import Service, create_app
    from podium.service.board_cache import FRESH_S
    from podium.service.check_pool import CheckPool, check_processes
    from podium.service.database import database_url, writing
    from podium.service.intake import inline
    from podium.service.proxies import parse_proxies
    from podium.service.scoring import Runtime
    from podium.service.server import KEEP_ALIVE_S, Workers, clean_leftovers, event_loop, serve_folder, worker_argv
    from podium.service.urls import parse_public_url

    logs.configure(log_format)
    if (contest_path is None) == (contests_folder is None):
        raise UsageError("give the contest file (--contest FILE) or a folder of contests (--contests DIR), one of them")
    if contests_folder is not None and team_names:
        raise UsageError(
            "--team names a team of the one contest served: with --contests, podium team add NAME --contest ID"
        )
    served = [load(contest_path)] if contest_path is not None else _read_folder(contests_folder)  # type: ignore[arg-type]
    contest = served[0]
    proxies = parse_proxies(trusted_proxies)
    public = None if public_url is None else parse_public_url(public_url)
    smtp_settings = smtp_of(smtp, mail_from, smtp_starttls, smtp_cafile)
    if smtp_settings is not None and public is None and host in WILDCARD_HOSTS:
        raise UsageError(
            f"--smtp with --host {host}: mailed links (password resets, address confirmations) would start with "
            f"http://{host}:{port}, which nobody else can reach; give --public-url URL, the address users reach the site at"
        )
    if scheduler is not None:
        distributed.check_reachable(scheduler)
    engine = _open(data, database, contest if contests_folder is None else None)
    if contests_folder is not None:
        serve_folder(engine, contests_folder, served)
        with writing(engine) as connection:
            state.put(connection, state.FOLDER, str(contests_folder.resolve()))
    clean_leftovers(data.resolve())
    pool = Workers(
        worker_argv(data.resolve(), Runtime(sandbox, cgroup, scheduler), log_format, worker_nice),
        workers,
        database_url(database, data),
    )
    address = f"http://{host}:{port}" if public is None else public.base
    if contests_folder is None:
        display.stdout.print(serve_banner(contest, address, data, workers, database is not None), soft_wrap=True)
    else:
        display.stdout.print(folder_banner(served, address, data, workers), soft_wrap=True)
    if public is not None:
        display.stdout.print(
            f"  podium listens on http://{host}:{port}; the proxy at {public.base}/ passes requests on to it",
            soft_wrap=True,
        )
    track = (
        f" --track {'|'.join(contest.track_ids())}" if contest.tracks else ""
    )  # a contest of several tracks: the team names one
    for name, token in _team_tokens(engine, team_names):
        display.stdout.print(
            f"  team {name}: {display.command_name()} submit --server {address} --token {token}{track} PATH",
            soft_wrap=True,
        )
    signal.signal(
        signal.SIGTERM, _interrupted
    )  # uvicorn raises the signal again once it has stopped: then stop the workers too
    if contests_folder is not None:  # SIGHUP: podium contest reload, in a thread (never in the signal handler)
        signal.signal(signal.SIGHUP, lambda *_: threading.Thread(target=_reload, args=(engine,), daemon=True).start())
    processes = check_processes(workers, web_processes) if check_processes_given is None else check_processes_given
    checks = CheckPool(contest.challenge, processes) if processes else None
    service = Service(
        engine,
        data.resolve(),
        allow_images=allow_images,
        proxies=proxies,
        public_url=public,
        checks=checks or inline,
        board_fresh_s=FRESH_S,
        board_pages_behind=True,
        board_warm=True,
    )
    mailer = mail.start_mailer(engine, smtp_settings, address, service.contests)
    web = None
    pool.start()
    try:
        if web_processes > 1:
            web, sock = _web_processes(
                web_processes,
                host,
                port,
                data.resolve(),
                database_url(database, data),
                contest.challenge,
                processes,
                allow_images,
                trusted_proxies,
                public_url,
                log_format,
            )
            web.start()
            while True:
                signal.pause()  # until SIGTERM or SIGINT
        app = create_app(service)
        # podium reads the forwarding headers of --trusted-proxy only
        uvicorn.run(
            app,
            host=host,
            port=port,
            proxy_headers=False,
            timeout_keep_alive=KEEP_ALIVE_S,
            root_path=public.prefix if public else "",
            **event_loop(),
            **logs.uvicorn_config(log_format),
        )
    except KeyboardInterrupt:
        pass
    finally:
        if web is not None:
            web.stop()
            sock.close()
        pool.stop()
        if checks is not None:
            checks.shutdown()
        if mailer is not None:
            mailer.stop()
    return EXIT_SCORED


@click.command("worker")
@database_options
@SANDBOX_OPTION
@CGROUP_OPTION
@SCHEDULER_OPTION
@click.option(
    "--nice",
    type=click.IntRange(0, 19),
    default=0,
    show_default=True,
    help="Score files at this CPU priority (0 to 19, nice(1)'s; podium serve gives its workers --worker-nice): higher yields the cores to other processes, such as a web process taking uploads; programs run at the worker's own.",
)
@click.option(
    "--lease",
    type=click.FloatRange(min=1),
    default=None,
    help="Seconds a job is held between heartbeats [default: 60].",
)
@mail_options(from_environment=False)
@click.option(
    "--public-url",
    metavar="URL",
    default=None,
    help="With --smtp: where users reach the site; mailed links start with it.",
)
@LOG_FORMAT_OPTION
@guarded
def worker_command(
    data: Path,
    database: str | None,
    sandbox: str,
    cgroup: Path | None,
    scheduler: str | None,
    nice: int,
    lease: float | None,
    smtp: str | None,
    mail_from: str | None,
    smtp_starttls: bool,
    smtp_cafile: str | None,
    public_url: str | None,
    log_format: str,
) -> int:
    """Score queued submissions until stopped (SIGTERM ends after the current job); run on any machine that sees --data.

    With --smtp (and --public-url), it also sends the mail waiting in the outbox, as podium serve --smtp does: each
    message once, whichever process claims it first.
    """
    import podium.scoring.kernels  # noqa: F401  # a worker serves many jobs: its compiled kernels load once, now, and every job may use them
    from podium.runner.workdir import remove_abandoned
    from podium.scoring import distributed
    from podium.service import logs, mail, state
    from podium.service.database import connect, database_url
    from podium.service.queue import LEASE_S
    from podium.service.scoring import Runtime
    from podium.service.server import die_with_serve
    from podium.service.urls import parse_public_url
    from podium.service.worker import Worker

    logs.configure(log_format)
    smtp_settings = smtp_of(smtp, mail_from, smtp_starttls, smtp_cafile)
    if smtp_settings is not None and public_url is None:
        raise UsageError("--smtp: give --public-url URL too, where users reach the site: mailed links start with it")
    if not die_with_serve():
        return EXIT_SCORED  # podium serve ended before this worker started
    remove_abandoned()  # what workers killed with SIGKILL left in the temporary folder
    if scheduler is not None:
        distributed.check_reachable(scheduler)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    engine = connect(database_url(database, data))
    mailer = None
    if smtp_settings is not None:
        site = parse_public_url(str(public_url)).base
        mailer = mail.Mailer(engine, smtp_settings, site, state.ContestCache(engine))
        mailer.start()
    try:
        runtime = Runtime(sandbox, cgroup, scheduler)
        Worker(engine, data.resolve(), runtime, lease_s=lease or LEASE_S, nice=nice).run(stop)
    finally:
        if mailer is not None:
            mailer.stop()
    return EXIT_SCORED


@click.group("team")
def team_group() -> None:
    """Teams of a contest: add, list, rename, remove, their members; bans and approvals; their tokens and invitation codes; a user's own: create, join, leave.

    A user creates, joins or leaves their team through the server: podium team create NAME, podium team join CODE,
    podium team leave.
    """


CONTEST_OPTION = click.option(
    "--contest",
    "contest",
    metavar="ID|FILE",
    help="The contest, by its id [default: the database's only one]; a contest file ties a new database to it.",
)


def _contest_of(connection: Any, contest: str | None) -> str:
    """The id of the contest ``--contest`` names (an id, or a contest file's), or the database's only one ('' before it serves any)."""
    from podium.service import accounts

    if contest is not None and Path(contest).is_file():
        contest = _load(Path(contest)).id  # type: ignore[union-attr]
    return accounts.contest_key(connection, contest)


def _served(engine: Any, contest: str | None) -> Contest:
    """The contest ``--contest`` names (an id, or a contest file's), as the database serves it; without it, the only one
    (a usage error listing the ids when the database serves several)."""
    from podium.service import state
    from podium.service.database import reading

    with reading(engine) as connection:
        chosen = _contest_of(connection, contest) or None
    return state.ContestCache(engine).get(chosen)


def _contest_file(contest: str | None) -> Contest | None:
    """The contest file ``--contest`` names, loaded (``None`` for an id)."""
    return _load(Path(contest)) if contest is not None and Path(contest).is_file() else None


@team_group.command("add")
@click.argument("name")
@CONTEST_OPTION
@click.option("--member", "members", multiple=True, metavar="USER", help="A user who joins the team (repeatable).")
@database_options
@guarded
def team_add_command(name: str, contest: str | None, members: tuple[str, ...], data: Path, database: str | None) -> int:
    """Add a team to a contest and print its API token (shown once; only its hash is kept)."""
    from podium.service import accounts, rosters
    from podium.service.database import writing

    engine = _open(data, database, _contest_file(contest))
    with writing(engine) as connection:
        chosen = _contest_of(connection, contest)
        team_id = accounts.add_team(connection, name, utc_now(), chosen)
        for member in members:
            rosters.add_member(connection, chosen, name, member)
        token = accounts.new_token(connection, team_id, False, f"podium team add {name}", utc_now())
    click.echo(token)
    return EXIT_SCORED


@team_group.command("list")
@CONTEST_OPTION
@database_options
@guarded
def team_list_command(contest: str | None, data: Path, database: str | None) -> int:
    """The contest's teams: name, members, submissions, standing (banned, waiting for approval), created."""
    from podium.service import rosters
    from podium.service.database import reading

    with reading(_open(data, database)) as connection:
        rows = rosters.roster(connection, _contest_of(connection, contest))
    for row in rows:
        members = row["members"]
        standing = "  banned" if row["banned"] else "  waits for approval" if not row["approved"] else ""
        click.echo(
            f"{row['team']}  {len(members)} member{'s' * (len(members) != 1)}"
            + (f" ({', '.join(members)})" if members else "")
            + f"  {row['submissions']} submitted{standing}  created {row['created']:%Y-%m-%d %H:%M} UTC"
        )
    return EXIT_SCORED


@team_group.group("member")
def team_member_group() -> None:
    """A team's members: add a user to a team of the contest (at most one team per contest), take one out."""


def _member_command(verb: str, summary: str, said: str) -> Any:
    """The command ``podium team member VERB TEAM USER``: :mod:`podium.service.rosters`'s ``VERB_member``, then ``said``."""

    @team_member_group.command(verb, help=summary)
    @click.argument("team")
    @click.argument("user")
    @CONTEST_OPTION
    @database_options
    @guarded
    def command(team: str, user: str, contest: str | None, data: Path, database: str | None) -> int:
        from podium.service import rosters
        from podium.service.database import writing

        with writing(_open(data, database)) as connection:
            getattr(rosters, f"{verb}_member")(connection, _contest_of(connection, contest), team, user)
        click.echo(said.format(user=user, team=team))
        return EXIT_SCORED

    return command


team_member_add_command = _member_command(
    "add", "Make a user a member of a team of the contest.", "{user} is a member of team {team}"
)
team_member_remove_command = _member_command(
    "remove",
    "Take a user out of a team (their account stays; from their next request they have no team in the contest).",
    "{user} is no longer a member of team {team}",
)


@team_group.command("rename")
@click.argument("name")
@click.argument("new")
@CONTEST_OPTION
@database_options
@guarded
def team_rename_command(name: str, new: str, contest: str | None, data: Path, database: str | None) -> int:
    """Rename a team of the contest; its tokens, members and submissions stay its own."""
    from podium.service import rosters
    from podium.service.database import writing

    with writing(_open(data, database, renaming=True)) as connection:
        rosters.rename(connection, _contest_of(connection, contest), name, new)
    click.echo(f"team {name} is now {new}")
    return EXIT_SCORED


@team_group.command("remove")
@click.argument("name")
@CONTEST_OPTION
@database_options
@guarded
def team_remove_command(name: str, contest: str | None, data: Path, database: str | None) -> int:
    """Remove a team that has sent nothing, with its tokens; its members' accounts stay (a team that has sent: ban it)."""
    from podium.service import rosters
    from podium.service.database import writing

    with writing(_open(data, database)) as connection:
        rosters.remove(connection, _contest_of(connection, contest), name)
    click.echo(f"removed team {name}")
    return EXIT_SCORED


@team_group.command("token")
@click.argument("name")
@click.option(
    "--days",
    type=click.IntRange(min=1),
    default=None,
    help="The token expires after this many days [default: never; revoke it with podium token revoke].",
)
@CONTEST_OPTION
@database_options
@guarded
def team_token_command(name: str, days: int | None, contest: str | None, data: Path, database: str | None) -> int:
    """Print a new API token for a team (its other tokens stay valid)."""
    from datetime import timedelta

    from podium.service import accounts
    from podium.service.database import writing

    now = utc_now()
    expires = None if days is None else now + timedelta(days=days)
    with writing(_open(data, database)) as connection:
        click.echo(
            accounts.new_token(
                connection,
                accounts.team_id(connection, name, _contest_of(connection, contest)),
                False,
                f"podium team token {name}",
                now,
                expires=expires,
            )
        )
    return EXIT_SCORED


@click.group("token")
def token_group() -> None:
    """API tokens and web sessions: list them, revoke one."""


@token_group.command("list")
@click.option("--team", help="Only this team's tokens (a team of the contest --contest names).")
@CONTEST_OPTION
@database_options
@guarded
def token_list_command(team: str | None, contest: str | None, data: Path, database: str | None) -> int:
    """The tokens that have not expired: id, team, label, created, expires (never the token itself)."""
    from podium.service import accounts
    from podium.service.database import reading

    with reading(_open(data, database)) as connection:
        chosen = None if team is None else accounts.team_id(connection, team, _contest_of(connection, contest))
        rows = accounts.token_rows(connection, chosen, utc_now())
    for row in rows:
        who = row["team"] or ("organizer" if row["organizer"] else "-")
        click.echo(
            f"{row['id']:>6}  {who}  {row['label']}  created {row['created']}  expires {row['expires'] or 'never'}"
        )
    return EXIT_SCORED


@token_group.command("revoke")
@click.argument("token_id", type=click.IntRange(min=1))
@database_options
@guarded
def token_revoke_command(token_id: int, data: Path, database: str | None) -> int:
    """Revoke a token (or end a web session) by its id, as podium token list shows it."""
    from podium.service import accounts
    from podium.service.database import writing

    with writing(_open(data, database)) as connection:
        if not accounts.revoke_token(connection, token_id, None):
            raise UsageError(f"no token {token_id}")
    click.echo(f"token {token_id} revoked")
    return EXIT_SCORED


@click.group("user")
def user_group() -> None:
    """Users of the server, who log in with a password: members of teams, organizers, the administrator."""


@user_group.command("add")
@click.argument("name")
@click.option("--team", help="The member's team (in the contest --contest names).")
@click.option("--organizer", is_flag=True, help="An organizer of the contest: sees every submission and full results.")
@click.option("--admin", is_flag=True, help="The site's administrator: an organizer of every contest.")
@CONTEST_OPTION
@click.option("--password-stdin", is_flag=True, help="Read the password from standard input instead of asking.")
@click.option("--email", metavar="ADDRESS", help="Where the user's notifications go.")
@database_options
@guarded
def user_add_command(
    name: str,
    team: str | None,
    organizer: bool,
    admin: bool,
    contest: str | None,
    password_stdin: bool,
    email: str | None,
    data: Path,
    database: str | None,
) -> int:
    """Add a user of the server: a member of a team (--team), an organizer (--organizer), the administrator (--admin), or
    without these an account that joins teams later (podium team add --member); the password is stored as an scrypt hash."""
    from podium.service import accounts, mail
    from podium.service.database import writing

    if team is not None and organizer:
        raise UsageError("give --team NAME or --organizer, not both")
    if email is not None:
        mail.check_address(email)
    password = (
        sys.stdin.readline().rstrip("\n")
        if password_stdin
        else click.prompt("password", hide_input=True, confirmation_prompt=True)
    )
    with writing(_open(data, database, _contest_file(contest))) as connection:
        chosen = None if contest is None else _contest_of(connection, contest)
        team_id = None if team is None else accounts.team_id(connection, team, chosen)
        user_id = accounts.add_user(
            connection, name, password, team_id, organizer, utc_now(), contest=chosen, admin=admin
        )
        if email is not None:
            mail.set_mail(connection, user_id, email, confirmed=True)  # the organizer vouches for it
    role = "organizer" if organizer else f"member of {team}" if team else "administrator" if admin else "user"
    click.echo(f"added {role} {name}")
    return EXIT_SCORED


@user_group.command("list")
@database_options
@guarded
def user_list_command(data: Path, database: str | None) -> int:
    """The server's users: name, role, teams (CONTEST/TEAM), contests organized, address."""
    from podium.service import accounts
    from podium.service.database import reading

    with reading(_open(data, database)) as connection:
        rows = accounts.user_rows(connection)
    for row in rows:
        roles = (["administrator"] if row["admin"] else []) + [f"organizer of {c}" for c in row["organizes"]]
        teams = ", ".join(row["teams"]) or "-"
        click.echo(f"{row['name']}  teams: {teams}  {'; '.join(roles)}  {row['email'] or ''}".rstrip())
    return EXIT_SCORED


@user_group.command("rename")
@click.argument("name")
@click.argument("new")
@database_options
@guarded
def user_rename_command(name: str, new: str, data: Path, database: str | None) -> int:
    """Rename a user; their password, teams, roles and sessions stay."""
    from podium.service import accounts
    from podium.service.database import writing

    with writing(_open(data, database, renaming=True)) as connection:
        accounts.rename_user(connection, name, new)
    click.echo(f"user {name} is now {new}")
    return EXIT_SCORED


@click.group("organizer")
def organizer_group() -> None:
    """Organizers of a contest: users who see every submission and full results of it."""


@organizer_group.command("add")
@click.argument("name")
@CONTEST_OPTION
@database_options
@guarded
def organizer_add_command(name: str, contest: str | None, data: Path, database: str | None) -> int:
    """Make a user an organizer of the contest (not of the server's other contests)."""
    from podium.service import accounts
    from podium.service.database import writing

    with writing(_open(data, database)) as connection:
        row = accounts.user_row(connection, name)
        if row is None:
            raise UsageError(f"no user {name!r}: podium user add {name} first")
        chosen = _contest_of(connection, contest)
        accounts.add_organizer(connection, row.id, chosen)
    click.echo(f"{name} organizes {chosen}")
    return EXIT_SCORED


@organizer_group.command("remove")
@click.argument("name")
@CONTEST_OPTION
@database_options
@guarded
def organizer_remove_command(name: str, contest: str | None, data: Path, database: str | None) -> int:
    """Make a user no longer an organizer of the contest; their sessions see it as anyone else from their next request."""
    from podium.service import accounts
    from podium.service.database import writing

    with writing(_open(data, database)) as connection:
        row = accounts.user_row(connection, name)
        chosen = _contest_of(connection, contest)
        if row is None or not accounts.remove_organizer(connection, row.id, chosen):
            raise UsageError(f"{name!r} is no organizer of {chosen}")
    click.echo(f"{name} no longer organizes {chosen}")
    return EXIT_SCORED


@user_group.command("remove")
@click.argument("name")
@database_options
@guarded
def user_remove_command(name: str, data: Path, database: str | None) -> int:
    """Remove a user; every session and token their log-ins made ends (their team and its submissions stay)."""
    from podium.service import accounts
    from podium.service.database import writing

    with writing(_open(data, database)) as connection:
        accounts.remove_user(connection, name)
    click.echo(f"removed user {name}")
    return EXIT_SCORED


@user_group.command("password")
@click.argument("name")
@click.option("--password-stdin", is_flag=True, help="Read the new password from standard input instead of asking.")
@database_options
@guarded
def user_password_command(name: str, password_stdin: bool, data: Path, database: str | None) -> int:
    """Change a user's password; every session and token their log-ins made ends."""
    from podium.service import accounts
    from podium.service.database import writing

    password = (
        sys.stdin.readline().rstrip("\n")
        if password_stdin
        else click.prompt("new password", hide_input=True, confirmation_prompt=True)
    )
    with writing(_open(data, database)) as connection:
        accounts.set_password(connection, name, password)
    click.echo(f"the password of {name} is changed; their sessions and tokens have ended")
    return EXIT_SCORED


@user_group.command("reset")
@click.argument("name")
@click.option(
    "--public-url",
    metavar="URL",
    envvar="PODIUM_PUBLIC_URL",
    default="http://127.0.0.1:8000",
    show_default=True,
    help="Where the contest is reached: the link starts with it [env PODIUM_PUBLIC_URL].",
)
@database_options
@guarded
def user_reset_command(name: str, public_url: str, data: Path, database: str | None) -> int:
    """Print a one-time link that sets the user's password (valid for an hour; a new link cancels the one before)."""
    from podium.service import resets
    from podium.service.database import writing

    with writing(_open(data, database)) as connection:
        _, token = resets.issue(connection, name, utc_now())
    click.echo(f"{public_url.rstrip('/')}{resets.PATH}{token}")
    return EXIT_SCORED


@team_group.command("invitation")
@click.argument("name")
@click.option("--renew", is_flag=True, help="Make a new code; the old one stops working.")
@click.option(
    "--revoke", is_flag=True, help="End the code now (its members' next look makes a new one); print nothing."
)
@CONTEST_OPTION
@database_options
@guarded
def team_invitation_command(
    name: str, renew: bool, revoke: bool, contest: str | None, data: Path, database: str | None
) -> int:
    """Print the team's invitation code (signing up with it joins the team, for 7 days), or revoke it."""
    from podium.service import accounts, invitations
    from podium.service.database import writing

    if renew and revoke:
        raise UsageError("give --renew or --revoke, not both")
    with writing(_open(data, database)) as connection:
        team = accounts.team_id(connection, name, _contest_of(connection, contest))
        if revoke:
            ended = invitations.revoke(connection, team)
            click.echo(
                f"team {name}: {'invitation code revoked' if ended else 'no invitation code to revoke'}", err=True
            )
        else:
            click.echo(invitations.code_of(connection, team, utc_now(), renew=renew).code)
    return EXIT_SCORED


USER_TOKEN_OPTION = click.option(
    "--token", envvar="PODIUM_TOKEN", required=True, help="Your log-in's API token [env PODIUM_TOKEN]."
)
CONTEST_ID_OPTION = click.option(
    "--contest",
    "contest_id",
    metavar="ID",
    default=None,
    help="The contest's id, when --server is the site [default: --server is a contest's page, URL/c/ID].",
)


def _contest_server(server: str, contest_id: str | None) -> str:
    """The contest's address: ``server``, or the site's ``server`` with ``/c/ID`` (a usage error if it names one)."""
    if contest_id is None:
        return server
    if "/c/" in server:
        raise UsageError(f"--server {server} names a contest already: give the site's address with --contest")
    return f"{server.rstrip('/')}/c/{contest_id}"


def _team_change(
    server: str, path: str, token: str, body: dict[str, Any] | None, status: int, as_json: bool
) -> dict[str, Any] | None:
    """``POST path`` of the contest at ``server`` with the user's token: its answer, or ``None`` once printed as JSON
    (``as_json``); an answer other than ``status`` is a :class:`PodiumError` naming it."""
    from podium.service.client import request

    answer = _answered(lambda: request(server, "POST", path, token, json_body=body))
    if answer.status != status:
        raise PodiumError(f"{answer.status}: {answer.message}")
    if as_json:
        click.echo(json.dumps(answer.body, indent=2))
        return None
    return dict(answer.body)


def _joining_command(verb: str, argument: str, field: str, summary: str) -> Any:
    """``podium team VERB ARGUMENT --server URL --token T [--contest ID]``: ``POST /api/contests/ID/team[/join]``
    with the user's log-in token (:mod:`podium.service.joining`)."""

    @team_group.command(verb, help=summary)
    @click.argument(argument.lower(), metavar=argument)
    @client_options
    @USER_TOKEN_OPTION
    @CONTEST_ID_OPTION
    @click.option("--accept-terms", is_flag=True, help="Accept the contest's terms (needed when it has a terms page).")
    @guarded
    def command(
        server: str, as_json: bool, token: str, contest_id: str | None, accept_terms: bool, **given: str
    ) -> int:
        body = {field: given[argument.lower()], "accept_terms": accept_terms}
        path = "/api/team" if verb == "create" else "/api/team/join"
        shown = _team_change(_contest_server(server, contest_id), path, token, body, 201, as_json)
        if shown is None:
            return EXIT_SCORED
        done = "created team" if shown["created"] else "joined team"
        waits = "" if shown["approved"] else "; it waits for the organizers' approval before it may submit"
        count = f"{shown['members']} member{'s' * (shown['members'] != 1)}"
        click.echo(f"{done} {shown['team']} in contest {shown['contest']} ({count}){waits}")
        return EXIT_SCORED

    return command


team_create_command = _joining_command(
    "create",
    "NAME",
    "name",
    "Create a team in a contest, you its first member (with your log-in's token, while its registration is open).",
)
team_join_command = _joining_command(
    "join",
    "CODE",
    "invitation",
    "Join a team of a contest by its invitation code (with your log-in's token, while its registration is open).",
)


@team_group.command("leave")
@client_options
@USER_TOKEN_OPTION
@CONTEST_ID_OPTION
@guarded
def team_leave_command(server: str, as_json: bool, token: str, contest_id: str | None) -> int:
    """Leave your team in a contest, until it sends its first submission (with your log-in's token, until teams are final)."""
    shown = _team_change(_contest_server(server, contest_id), "/api/team/leave", token, None, 200, as_json)
    if shown is None:
        return EXIT_SCORED
    after = (
        "it had no other member and had sent nothing, so it is removed"
        if shown["removed"]
        else f"{shown['members']} member{'s' * (shown['members'] != 1)} left"
    )
    click.echo(f"left team {shown['team']} in contest {shown['contest']} ({after})")
    return EXIT_SCORED


def _standing_command(group: click.Group, verb: str, summary: str, change: str, said: str, **values: bool) -> Any:
    """The command ``podium team|user VERB NAME``: ``podium.service.standing``'s ``change`` with ``values``, then ``said``."""

    of_team = change == "set_team"

    @group.command(verb, help=summary)
    @click.argument("name")
    @database_options
    @guarded
    def command(name: str, data: Path, database: str | None, contest: str | None = None) -> int:
        from podium.service import standing
        from podium.service.database import writing

        with writing(_open(data, database)) as connection:
            keys = (_contest_of(connection, contest),) if of_team else ()
            getattr(standing, change)(connection, *keys, name, **values)
        click.echo(said.format(name))
        return EXIT_SCORED

    return CONTEST_OPTION(command) if of_team else command


team_ban_command = _standing_command(
    team_group,
    "ban",
    "Ban a team: its members cannot log in, its tokens are refused, it is off the board; its submissions are kept.",
    "set_team",
    "team {} is banned",
    banned=True,
)
team_unban_command = _standing_command(
    team_group,
    "unban",
    "Lift a team's ban: it logs in, submits and is on the board again.",
    "set_team",
    "team {} is no longer banned",
    banned=False,
)
team_approve_command = _standing_command(
    team_group,
    "approve",
    "Approve a team that registered itself where the contest sets [service] approval = true: it may submit.",
    "set_team",
    "team {} is approved",
    approved=True,
)
user_ban_command = _standing_command(
    user_group,
    "ban",
    "Ban a user: refused at log-in, and every token of theirs refused.",
    "set_user",
    "user {} is banned",
    banned=True,
)
user_unban_command = _standing_command(
    user_group, "unban", "Lift a user's ban.", "set_user", "user {} is no longer banned", banned=False
)


@click.command("reveal")
@CONTEST_OPTION
@database_options
@guarded
def reveal_command(contest: str | None, data: Path, database: str | None) -> int:
    """Reveal the private split now: the leaderboard shows the final ranking, and teams their full results."""
    from podium.service import state
    from podium.service.database import writing

    with writing(_open(data, database)) as connection:
        state.put(connection, state.REVEALED, utc_now().isoformat(), state.only_contest(connection, contest))
    click.echo("the private split is revealed")
    return EXIT_SCORED


@click.command("rescore")
@click.option(
    "--contest",
    "contest",
    metavar="ID|FILE",
    help="The contest, by its id [default: the database's only one]; a contest file is served from now on "
    "(same id: a new truth, parameters or split).",
)
@database_options
@guarded
def rescore_command(contest: str | None, data: Path, database: str | None) -> int:
    """Score every accepted submission of a contest again in a new round; the board is rebuilt, earlier results are kept."""
    from podium.service.rescore import rescore

    engine = _open(data, database, _contest_file(contest))
    round_, count = rescore(engine, _served(engine, contest).id)
    click.echo(f"round {round_}: {count} submission{'s' * (count != 1)} queued for scoring again")
    return EXIT_SCORED


@click.command("migrate")
@database_options
@guarded
def migrate_command(data: Path, database: str | None) -> int:
    """Bring the database to this podium's schema (podium serve does it on start); print the revisions."""
    from podium.service.database import SQLITE_FILE, connect, database_url, migrate, schema_revision

    if database is None and not (data / SQLITE_FILE).is_file():
        raise UsageError(f"no database in {data}: give the contest's --data (or --database)")
    engine = connect(database_url(database, data))
    before = schema_revision(engine)
    migrate(engine)
    after = schema_revision(engine)
    click.echo(
        f"schema {before} -> {after}" if before != after else f"schema {after}: already this podium's ({__version__})"
    )
    return EXIT_SCORED


@click.command("backup")
@database_options
@click.argument("out", type=click.Path(dir_okay=False, path_type=Path))
@guarded
def backup_command(data: Path, database: str | None, out: Path) -> int:
    """Write the contest (database, stored submissions, results) to the archive OUT, while it is served."""
    from podium.service.backup import backup

    manifest = backup(data, database, out)
    rows = manifest["rows"]
    click.echo(
        f"{out}: {len(manifest['files']):,} files; {rows.get('teams', 0)} teams, {rows.get('users', 0)} users, "
        f"{rows.get('submissions', 0)} submissions, {rows.get('results', 0)} results"
    )
    return EXIT_SCORED


@click.command("restore")
@click.argument("archive", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@database_options
@guarded
def restore_command(archive: Path, data: Path, database: str | None) -> int:
    """Restore a backup into an empty --data folder (and an empty --database), then bring it to this podium's schema."""
    from podium.service.backup import restore

    manifest = restore(archive, data, database)
    click.echo(
        f"restored {manifest['contest']} as backed up at {manifest['created']} by podium {manifest['podium']} into {data}"
    )
    return EXIT_SCORED


TRACK_OPTION = click.option(
    "--track", help="The track (a [[track]]'s id in the contest file) [default: the contest's only track]."
)


def METHOD_OPTIONS(command: Any) -> Any:
    """The method's options of ``podium submit`` and ``podium describe``."""
    for option in reversed(
        [
            click.option("--method", "method_name", metavar="NAME", help="The method's name (at most 100 characters)."),
            click.option("--description", metavar="TEXT", help="The method in plain text (at most 4,000 characters)."),
            click.option("--paper", metavar="URL", help="An http(s) link to the method's paper."),
            click.option("--code", metavar="URL", help="An http(s) link to the method's code."),
            click.option(
                "--show-method",
                is_flag=True,
                help="Show the method on the leaderboard after the reveal (never before).",
            ),
        ]
    ):
        command = option(command)
    return command


def _method_query(method: dict[str, Any]) -> dict[str, str]:
    """The options given, as the API's fields."""
    fields = {
        "method": method["method_name"],
        "description": method["description"],
        "paper_url": method["paper"],
        "code_url": method["code"],
    }
    return {k: v for k, v in fields.items() if v} | ({"shown": "true"} if method["show_method"] else {})


@click.command("submit")
@client_options
@TOKEN_OPTION
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--entry",
    help="Programs: the entry point in the archive [run.sh, else its only .py or .sh file at the top], or docker: when the file is an image saved by docker save.",
)
@click.option(
    "--wait", "wait_s", type=click.FloatRange(min=0), default=0, help="Wait up to this many seconds for the score."
)
@TRACK_OPTION
@METHOD_OPTIONS
@guarded
def submit_command(
    server: str,
    as_json: bool,
    token: str,
    path: Path,
    entry: str | None,
    wait_s: float,
    track: str | None,
    **method: Any,
) -> int:
    """Upload a submission (a file, or a folder sent as tar.gz) to a track; print its status and every problem."""
    from podium.service.client import request, submit

    decimals = _decimals(server)
    answer = _answered(lambda: submit(server, token, path, entry, track, _method_query(method)))
    if (
        answer.status not in (201, 422) or "status" not in answer.body
    ):  # a 422 without a status: the request, not the files (no such track)
        raise PodiumError(f"the server refused the submission ({answer.status}): {answer.message}")
    shown = answer.body
    deadline = time.monotonic() + wait_s
    while shown["status"] not in FINAL and time.monotonic() < deadline:
        time.sleep(0.5)
        shown = _answered(lambda: request(server, "GET", f"/api/submissions/{answer.body['id']}", token)).body
    _print_submission(shown, as_json, decimals)
    return EXIT_REJECTED if shown["status"] in NOT_SCORED_BY_THE_TEAMS_FAULT else EXIT_SCORED


@click.command("status")
@client_options
@TOKEN_OPTION
@click.argument("submission_id", type=int, required=False)
@guarded
def status_command(server: str, as_json: bool, token: str, submission_id: int | None) -> int:
    """Your team's submissions (or one, with its problems and result)."""
    from podium.publish import display
    from podium.service.client import request

    path = "/api/submissions" + (f"/{submission_id}" if submission_id is not None else "")
    answer = _answered(lambda: request(server, "GET", path, token))
    if answer.status != 200:
        raise PodiumError(f"{answer.status}: {answer.message}")
    decimals = None if as_json else _decimals(server)
    if submission_id is not None:
        _print_submission(answer.body, as_json, decimals)
    elif as_json:
        click.echo(json.dumps(answer.body, indent=2))
    else:
        for item in answer.body:
            since = f" since {item['started']}" if item["status"] == "running" else ""
            reason = f": {item['reason']}" if item["reason"] else ""
            scores = _scores_text(item, decimals)
            display.stdout.print(
                f"{item['id']:>6}  {item['created']}  {item['phase']}  {item['status']}{since}{display.escape(reason)}{'  ' + scores if scores else ''}",
                soft_wrap=True,
            )
    return EXIT_SCORED


@click.command("download")
@client_options
@TOKEN_OPTION
@click.argument("submission_id", type=int)
@click.option(
    "--what",
    type=click.Choice(["file", "result", "logs"]),
    default="file",
    show_default=True,
    help="The file as uploaded, the result document (its public view until the reveal), or a program run's logs.",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
    help="Where to write it ('-': standard output) [default: the file's name, or submission-N-result.json, submission-N-logs.txt, here].",
)
@guarded
def download_command(server: str, as_json: bool, token: str, submission_id: int, what: str, out: Path | None) -> int:
    """Download one of your submissions: the file as uploaded, its result document, or its program's logs."""
    from podium.service.client import request

    shown = _answered(lambda: request(server, "GET", f"/api/submissions/{submission_id}", token))
    if shown.status != 200:
        raise PodiumError(f"{shown.status}: {shown.message}")
    if out is None:
        named = {"file": Path(shown.body["filename"]).name, "result": "", "logs": ""}[what]
        out = Path(named if named not in ("", ".", "..") else f"submission-{submission_id}-{what}")
        out = out.with_suffix(".json") if what == "result" else out.with_suffix(".txt") if what == "logs" else out
        if out.exists():
            raise UsageError(f"{out} exists: name another file with --out")
    path = f"/api/submissions/{submission_id}/{what}"
    if str(out) == "-":
        answer = _answered(lambda: request(server, "GET", path, token, into=click.get_binary_stream("stdout")))
    else:
        partial = out.with_name(out.name + ".part")
        with open(partial, "wb") as sink:
            answer = _answered(lambda: request(server, "GET", path, token, into=sink))
        if answer.status == 200:
            partial.replace(out)
        partial.unlink(missing_ok=True)
    if answer.status != 200:
        raise PodiumError(f"{answer.status}: {answer.message}")
    if str(out) != "-":
        click.echo(f"{out}: submission {submission_id}'s {what}", err=as_json)
    return EXIT_SCORED


@click.command("describe")
@client_options
@TOKEN_OPTION
@click.argument("submission_id", type=int)
@METHOD_OPTIONS
@guarded
def describe_command(server: str, as_json: bool, token: str, submission_id: int, **method: Any) -> int:
    """Describe the method of one of your submissions (until its phase ends): what you give replaces what was said."""
    from podium.service.client import request

    body = {k: v for k, v in _method_query(method).items() if k != "shown"} | {"shown": bool(method["show_method"])}
    path = f"/api/submissions/{submission_id}/method"
    answer = _answered(lambda: request(server, "PUT", path, token, json_body=body))
    if answer.status != 200:
        raise PodiumError(f"{answer.status}: {answer.message}")
    said = answer.body
    if as_json:
        click.echo(json.dumps(said, indent=2))
    else:
        shown = "shown on the leaderboard after the reveal" if said["shown"] else "not shown to other teams"
        click.echo(f"submission {submission_id}: {said['method'] or 'unnamed method'}, {shown}")
    return EXIT_SCORED


@click.command("select")
@client_options
@TOKEN_OPTION
@click.argument("submission_id", type=int)
@click.option("--unselect", is_flag=True, help="Take the submission out of your final choice.")
@guarded
def select_command(server: str, as_json: bool, token: str, submission_id: int, unselect: bool) -> int:
    """Select one of your scored submissions for the final ranking (final = "selected"), or unselect it."""
    from podium.service.client import request

    query = {"selected": "false" if unselect else "true"}
    path = f"/api/submissions/{submission_id}/selected"
    return _decided(_answered(lambda: request(server, "PUT", path, token, query=query)), as_json)


@click.command("cancel")
@client_options
@TOKEN_OPTION
@click.argument("submission_id", type=int)
@guarded
def cancel_command(server: str, as_json: bool, token: str, submission_id: int) -> int:
    """Cancel one of your queued submissions (it uses no quota)."""
    from podium.service.client import request

    path = f"/api/submissions/{submission_id}/cancel"
    return _decided(_answered(lambda: request(server, "POST", path, token)), as_json)


def _decided(answer: Any, as_json: bool) -> int:
    """Print what the server did (a selection, a cancellation); its refusal as an error (exit 2)."""
    if answer.status != 200:
        raise PodiumError(f"{answer.status}: {answer.message}")
    body = answer.body
    if as_json:
        click.echo(json.dumps(body, indent=2))
    elif "selected" in body:
        click.echo(f"submission {body['id']}: {'selected' if body['selected'] else 'not selected'}")
    else:
        click.echo(f"submission {body['id']}: {body['status']}")
    return EXIT_SCORED


@click.command("leaderboard")
@client_options
@TRACK_OPTION
@click.option(
    "--phase",
    default=None,
    help="When phases name their own data: the board of this phase [default: the latest phase that has started].",
)
@click.option("--csv", "as_csv", is_flag=True, help="Print the board as CSV (ranks, team, entries, last, each score).")
@guarded
def leaderboard_command(server: str, as_json: bool, track: str | None, phase: str | None, as_csv: bool) -> int:
    """A track's leaderboard, the contest's only one by default (public scores until the reveal)."""
    from podium.challenges import get
    from podium.challenges.base import ScoreSpec
    from podium.publish import display
    from podium.ranking.ranks import Team
    from podium.service.client import request

    query = {key: value for key, value in (("track", track), ("phase", phase)) if value is not None} or None
    if as_csv:
        answer = _answered(
            lambda: request(server, "GET", "/api/leaderboard.csv", query=query, into=click.get_binary_stream("stdout"))
        )
        if answer.status != 200:
            raise PodiumError(f"{answer.status}: {answer.message}")
        return EXIT_SCORED
    answer = _answered(lambda: request(server, "GET", "/api/leaderboard", query=query))
    if answer.status != 200:
        raise PodiumError(f"{answer.status}: {answer.message}")
    board = answer.body
    if as_json:
        click.echo(json.dumps(board, indent=2))
        return EXIT_SCORED
    teams = [Team(t["team"], t["status"], t["scores"], t["ranks"], t["rank_sum"], t["rank"]) for t in board["teams"]]
    criteria = [ScoreSpec(c["name"], c["higher_is_better"], "") for c in board["criteria"]]
    split = "final ranking, private split" if board["revealed"] else "public split"
    track_title = f": {board['track_title']}" if board.get("track") else ""
    track_title += f", phase {', '.join(board['phases'])}" if board.get("phases") else ""
    display.stdout.print(f"[bold]{display.escape(board['title'] + track_title)}[/bold] ({split})")
    shown = display.leaderboard(get(board["challenge"]), teams, criteria, board["rank_sum"], board.get("decimals"))
    display.print_table(shown)
    return EXIT_SCORED


@click.command("account")
@client_options
@TOKEN_OPTION
@click.option("--email", metavar="ADDRESS", default=None, help="Set your address for notifications ('' : no mail).")
@click.option(
    "--notify",
    "notify",
    multiple=True,
    metavar="KIND=on|off",
    help="Turn a kind of notification on or off: scored, failed, phase, revealed (repeatable).",
)
@click.option(
    "--renew-invitation", is_flag=True, help="Make a new invitation code for your team (the old one stops working)."
)
@guarded
def account_command(
    server: str, as_json: bool, token: str, email: str | None, notify: tuple[str, ...], renew_invitation: bool
) -> int:
    """Your account (with a token from logging in): your address, your notifications, your team's invitation code."""
    from podium.service.client import request

    change: dict[str, Any] = {} if email is None else {"email": email}
    for item in notify:
        kind, _, value = item.partition("=")
        if value not in ("on", "off"):
            raise UsageError(f"--notify {item!r}: give KIND=on or KIND=off")
        change.setdefault("notifications", {})[kind] = value == "on"
    answer = _answered(
        lambda: request(server, "PUT" if change else "GET", "/api/account", token, json_body=change if change else None)
    )
    if answer.status != 200:
        raise (
            UsageError(f"{answer.status}: {answer.message}")
            if answer.status == 422
            else PodiumError(f"{answer.status}: {answer.message}")
        )
    shown = answer.body
    if shown["team"] is not None:
        code = _answered(lambda: request(server, "POST" if renew_invitation else "GET", "/api/team/invitation", token))
        shown["invitation"] = code.body.get("invitation")
    if as_json:
        click.echo(json.dumps(shown, indent=2))
        return EXIT_SCORED
    click.echo(
        f"{shown['user']}{' of team ' + shown['team'] if shown['team'] else ''}; mail to {shown['email'] or 'nobody'}"
    )
    click.echo(
        "notifications: " + ", ".join(f"{kind} {'on' if on else 'off'}" for kind, on in shown["notifications"].items())
    )
    if shown.get("invitation"):
        click.echo(f"invitation code: {shown['invitation']}")
    return EXIT_SCORED


def _interrupted(*_: object) -> None:
    raise KeyboardInterrupt


def _web_processes(
    count: int,
    host: str,
    port: int,
    data: Path,
    database: str,
    challenge: str,
    check_processes: int,
    allow_images: bool,
    proxies: tuple[str, ...],
    public_url: str | None,
    log_format: str,
) -> tuple[Any, Any]:
    """``count`` web processes (not started yet: ``.start()``) and the socket bound to ``host:port`` they accept on."""
    from podium.service.board_cache import FRESH_S
    from podium.service.board_share import shared_folder
    from podium.service.server import KEEP_ALIVE_S, Workers
    from podium.service.web_processes import WebSettings, environment, listening, metrics_folder, web_argv

    sock = listening(host, port)
    shared_folder(data)  # the boards the web processes share, none of another run's
    settings = WebSettings(
        str(data),
        sock.fileno(),
        challenge,
        allow_images,
        list(proxies),
        public_url,
        check_processes,
        log_format,
        KEEP_ALIVE_S,
        FRESH_S,
    )
    web = Workers(
        web_argv(),
        count,
        database,
        what="a web process",
        environment=environment(settings, metrics_folder(data)),
        pass_fds=(sock.fileno(),),
    )
    return web, sock


def _team_tokens(engine: Any, names: tuple[str, ...]) -> list[tuple[str, str]]:
    """A new token for each named team, adding the teams that are new."""
    from podium.service import accounts
    from podium.service.database import writing

    tokens = []
    with writing(engine) as connection:
        for name in names:
            try:
                team = accounts.team_id(connection, name)
            except UsageError:
                team = accounts.add_team(connection, name, utc_now())
            tokens.append((name, accounts.new_token(connection, team, False, f"podium serve --team {name}", utc_now())))
    return tokens


def _answered(call: Any) -> Any:
    from podium.service.client import ServerUnreachable

    try:
        answer = call()
    except ServerUnreachable as exc:
        raise PodiumError(str(exc)) from None
    if answer.status == 401:
        raise PodiumError(f"the server does not know this token: {answer.message}")
    return answer


def _decimals(server: str) -> int | None:
    """The contest's ranking decimals, to print scores as it ranks them (``None``: in full, or the server did not say)."""
    from podium.service.client import ServerUnreachable, request

    try:
        answer = request(server, "GET", "/api/contest")
    except ServerUnreachable:
        return None  # the command's own request says so
    ranking = answer.body.get("ranking") if answer.status == 200 and isinstance(answer.body, dict) else None
    decimals = ranking.get("decimals") if isinstance(ranking, dict) else None
    return decimals if isinstance(decimals, int) else None


def _scores_text(item: dict[str, Any], decimals: int | None) -> str:
    """A submission's scores as the team may see them (public ones until the reveal), the per-class and per-part ones left out."""
    from podium.publish import display

    result = item.get("result") or {}
    scores = ((result.get("splits") or {}).get("public") or {}).get("scores") or result.get("scores") or {}
    shown = ", ".join(f"{k}={display.score_text(v, decimals)}" for k, v in scores.items() if "/" not in k)
    return f"{'public ' if (result.get('splits') or {}).get('public') else ''}scores: {shown}" if shown else ""


def _print_submission(item: dict[str, Any], as_json: bool, decimals: int | None = None) -> None:
    from podium.publish import display

    if as_json:
        click.echo(json.dumps(item, indent=2))
        return
    display.stdout.print(
        f"submission {item['id']}: [bold]{item['status']}[/bold]"
        + (f": {display.escape(item['reason'])}" if item.get("reason") else ""),
        soft_wrap=True,
    )
    for problem in item.get("problems") or []:
        where = ":".join(str(x) for x in (problem.get("file"), problem.get("line")) if x not in (None, ""))
        display.stdout.print(
            f"  {display.escape(where)}{': ' if where else ''}{display.escape(problem['message'])}", soft_wrap=True
        )
    scores = _scores_text(item, decimals)
    if scores:
        display.stdout.print(scores, soft_wrap=True)
    if item.get("stderr_tail"):
        display.stdout.print(
            "last lines of the program's stderr:\n" + display.escape(item["stderr_tail"]), soft_wrap=True
        )


COMMANDS = (
    serve_command,
    worker_command,
    team_group,
    token_group,
    user_group,
    organizer_group,
    reveal_command,
    rescore_command,
    migrate_command,
    backup_command,
    restore_command,
    submit_command,
    status_command,
    download_command,
    describe_command,
    select_command,
    cancel_command,
    leaderboard_command,
    account_command,
)
