"""``podium serve``: the web app on uvicorn and N worker processes beside it, restarted if they die.

Idle keep-alive connections are kept :data:`KEEP_ALIVE_S` seconds.

The workers die with ``podium serve`` (``PR_SET_PDEATHSIG``: killed with
SIGKILL, their programs with them, even when ``podium serve`` itself is killed
with SIGKILL; their jobs' leases then lapse and other workers take them). The
database URL, which may hold a password, reaches them in their environment,
never on their command line, which every local user can read. At start,
uploads half received by a server that was killed are deleted.
"""

from __future__ import annotations

import hashlib
import importlib
import logging
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from sqlalchemy import Engine, insert, select, update

from podium.contest import Contest
from podium.contest import load as load_contest
from podium.core.errors import PodiumError, UsageError
from podium.runner.tree import die_with_parent
from podium.service import state
from podium.service.database import reading, writing
from podium.service.statuses import utc_now
from podium.service.tables import contests, memberships, teams, tokens

if TYPE_CHECKING:
    from podium.service.scoring import Runtime

log = logging.getLogger("podium.serve")
RESTART_PAUSE_S = 2.0
# How long an idle keep-alive connection stays open. uvicorn's 5 s closed connections that a client (a reverse proxy
# keeping upstream connections for 60 s, like nginx; a browser between the board's polls) still held and sent its next
# request on: that request failed. Longer than the proxies' idle times, so the client closes first.
KEEP_ALIVE_S = 75
SERVE_PID = "PODIUM_SERVE_PID"  # set for the workers podium serve starts
WEB_INDEX = "PODIUM_WEB_INDEX"  # which of the N processes of a kind this one is (0..N-1), kept when started again


class EventLoop(TypedDict):
    """uvicorn's options naming its event loop and its HTTP parser."""

    loop: str
    http: str


def event_loop() -> EventLoop:
    """uvicorn's ``loop`` and ``http``: uvloop and httptools where their wheels are installed, else asyncio's loop and h11; logged.

    uvloop and httptools took 25% less CPU per API board request and 47% less per board page, and halved their
    median (``benchmarks/event_loop.py``); they have wheels for CPython on Linux and macOS, and the fallback
    serves wherever they are absent.
    """
    chosen = EventLoop(loop=importable("uvloop") or "asyncio", http=importable("httptools") or "h11")
    log.info("event loop %s, HTTP parser %s", chosen["loop"], chosen["http"])
    return chosen


def importable(name: str) -> str | None:
    """``name`` if the module imports, else ``None``."""
    try:
        importlib.import_module(name)
    except ImportError:
        return None
    return name


def clean_leftovers(data: Path) -> int:
    """Delete what uploads left in ``DATA/incoming`` (spooled bodies, unpacked staging folders); how many."""
    incoming = data / "incoming"
    if not incoming.is_dir():
        return 0
    cleaned = 0
    for entry in incoming.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)
        cleaned += 1
    return cleaned


def register_contest(engine: Engine, contest: Contest, *, alone: bool = True) -> None:
    """Serve ``contest`` from the database: added, or its file's path updated; ``alone``: refused if the database serves another.

    The first contest a database serves adopts the teams and tokens made before it (their contest ``''``).
    """
    with writing(engine) as connection:
        served = state.served_ids(connection)
        others = [known for known in served if known != contest.id]
        if alone and others:
            raise UsageError(
                f"this database holds the contest {others[0]!r}, not {contest.id!r}; give another --data or --database"
            )
        path = str(contest.path.resolve())
        found = connection.execute(
            update(contests).where(contests.c.id == contest.id).values(path=path, withdrawn=False)
        )
        if found.rowcount == 0:
            connection.execute(insert(contests).values(id=contest.id, path=path, added=utc_now(), withdrawn=False))
        state.put(connection, state.READ, hashlib.sha256(contest.path.read_bytes()).hexdigest(), contest.id)
        if not served:
            connection.execute(update(teams).where(teams.c.contest == "").values(contest=contest.id))
            connection.execute(update(memberships).where(memberships.c.contest == "").values(contest=contest.id))
            connection.execute(
                update(tokens).where(tokens.c.contest.is_(None), ~tokens.c.organizer).values(contest=contest.id)
            )


def contest_files(folder: Path) -> list[Path]:
    """The contest files of a folder: ``NAME/contest.toml`` in each of its folders (as ``examples/contests`` lays them
    out, each contest's data beside its file), and each ``*.toml`` at its top; by path."""
    return sorted({*folder.glob("*/contest.toml"), *folder.glob("*.toml")})


def read_folder(folder: Path) -> tuple[list[Contest], list[str]]:
    """The contests of the folder's files that read (:func:`podium.contest.load`'s checks, as ``podium contest check``
    makes them), and what is wrong with each other file, naming it and its line; a second file with an id already read
    is refused."""
    read: dict[str, Contest] = {}
    problems: list[str] = []
    for path in contest_files(folder):
        try:
            contest = load_contest(path)
        except PodiumError as exc:
            issues = [str(issue) for issue in getattr(exc, "issues", ())]
            said = str(exc) if str(path) in str(exc) else f"{path}: {exc}"
            problems.append("\n  ".join([said, *issues]))
            continue
        if contest.id in read:
            problems.append(
                f"{path}: the id {contest.id!r} is the id of {read[contest.id].path} already: give each contest its own"
            )
            continue
        read[contest.id] = contest
    return list(read.values()), problems


def serve_folder(engine: Engine, folder: Path, read: list[Contest]) -> list[str]:
    """Serve the contests ``read`` from ``folder``; withdraw the contests served from a file of the folder that is gone, or
    that holds another id now (their pages answer 404, their data is kept); the ids withdrawn. A file that no longer
    reads withdraws nothing: its contest is served as it was last read."""
    for contest in read:
        register_contest(engine, contest, alone=False)
    kept = {contest.id for contest in read}
    renamed = {str(contest.path.resolve()) for contest in read}
    inside = str(folder.resolve()) + os.sep
    with writing(engine) as connection:
        gone = [
            row.id
            for row in connection.execute(select(contests.c.id, contests.c.path).where(~contests.c.withdrawn))
            if row.id not in kept
            and row.path.startswith(inside)
            and (not Path(row.path).is_file() or row.path in renamed)  # gone, or holding another id now
        ]
        if gone:
            connection.execute(update(contests).where(contests.c.id.in_(gone)).values(withdrawn=True))
    return gone


def reload_folder(engine: Engine) -> tuple[list[str], list[str], list[str]]:
    """Read the folder ``podium serve --contests`` serves again: every contest file added or changed is served as it
    now reads, a removed one withdrawn (:func:`serve_folder`); the ids served, the problems of the files that do not
    read (their contests served as last read), the ids withdrawn. Every web process takes it up at its next request
    (:class:`~podium.service.state.ContestCache` reads each contest's :data:`~podium.service.state.READ` stamp)."""
    with reading(engine) as connection:
        folder = state.get(connection, state.FOLDER)
    if folder is None:
        raise UsageError("this database serves no folder of contests: start podium serve --contests DIR")
    read, problems = read_folder(Path(folder))
    withdrawn = serve_folder(engine, Path(folder), read)
    for problem in problems:
        log.warning("not served as changed: %s", problem)
    return [contest.id for contest in read], problems, withdrawn


def die_with_serve() -> bool:
    """In a worker that ``podium serve`` started: be killed when it ends; ``False`` if it already has (then stop).

    Set by the worker itself rather than between fork and exec, which is unsafe
    in a process with threads (uvicorn's).
    """
    serve = os.environ.get(SERVE_PID)
    if serve is None:
        return True
    die_with_parent()
    return os.getppid() == int(serve)


def worker_argv(data: Path, runtime: Runtime, log_format: str = "text", nice: int = 0) -> list[str]:
    """``podium worker``'s command line for a worker of ``podium serve``, at the CPU priority ``nice``."""
    command = [
        sys.executable,
        "-m",
        "podium",
        "worker",
        "--data",
        str(data),
        "--sandbox",
        runtime.sandbox,
        "--log-format",
        log_format,
        "--nice",
        str(nice),
    ]
    return (
        command
        + (["--cgroup", str(runtime.cgroup)] if runtime.cgroup else [])
        + (["--scheduler", runtime.scheduler] if runtime.scheduler else [])
    )


class Workers:
    """N ``podium worker`` processes (or web processes: ``what``), each started again if it ends while the service runs.

    Each knows its index (0 to N-1) by ``PODIUM_WEB_INDEX``; ``pass_fds``: what they inherit (the web processes' socket).
    """

    def __init__(
        self,
        command: list[str],
        count: int,
        database: str,
        what: str = "a worker",
        environment: dict[str, str] | None = None,
        pass_fds: tuple[int, ...] = (),
    ) -> None:
        self.command = command
        self.what = what
        self.pass_fds = pass_fds
        self.environment = {
            **os.environ,
            **(environment or {}),
            "PODIUM_DATABASE": database,
            SERVE_PID: str(os.getpid()),
        }
        self.stopping = threading.Event()
        self.processes: list[subprocess.Popen[bytes]] = []
        self.threads = [threading.Thread(target=self._keep_one, args=(i,), daemon=True) for i in range(count)]

    def start(self) -> None:
        for thread in self.threads:
            thread.start()

    def _keep_one(self, index: int) -> None:
        environment = {**self.environment, WEB_INDEX: str(index)}
        while not self.stopping.is_set():
            process = subprocess.Popen(
                self.command, env=environment, pass_fds=self.pass_fds
            )  # this thread is its parent (see die_with_serve)
            self.processes.append(process)
            process.wait()
            if not self.stopping.is_set():
                log.warning("podium: %s ended (exit code %s); starting another", self.what, process.returncode)
                self.stopping.wait(RESTART_PAUSE_S)

    def stop(self) -> None:
        self.stopping.set()
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
