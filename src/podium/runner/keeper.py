"""The keeper: parent of a participant's program and of every process the program leaves behind.

``python -m podium.runner.keeper FD [--join FILE]... [--bind SOURCE TARGET]... [--view TARGET]...
[--user UID:GID] [--env NAME=VALUE]... [--fsize BYTES] -- PROGRAM [ARGS...]`` makes itself a child subreaper, starts
the program, and reaps every descendant until none is left
(orphans are re-parented to it, not to init); then it exits with the program's
exit code, 128 + N if signal N ended it. On file descriptor FD it writes the
``CLOCK_MONOTONIC`` time at which it started the program and, on the next line,
the time at which the last process ended, so the program's wall time excludes
the keeper's own start-up. The caller measures and kills the
keeper's descendants only, so running a program never touches the caller's
other children and never makes the caller a subreaper. The keeper dies with its
parent (``PR_SET_PDEATHSIG``).

Before the program starts, its process joins the cgroups named by ``--join``
(their ``cgroup.procs`` files), binds each ``--bind`` pair privately (covering each ``--view`` target
with a read-only overlay of itself) and drops
to ``--user`` (:mod:`podium.runner.confine`); if one of these fails, the program
is not started: the keeper writes ``!`` and the reason as a line on FD and exits
with ``EXIT_NOT_CONFINED``. With ``--env``, the program starts with those
variables only, not the keeper's (which are the server's); with ``--fsize``, no
file it writes may grow past ``BYTES`` (``RLIMIT_FSIZE``), and ``fallocate``
fails (:func:`podium.runner.confine.forbid_preallocation`).
"""

from __future__ import annotations

import os
import resource
import signal
import sys
import time
from dataclasses import dataclass, field

from podium.runner import confine
from podium.runner.tree import become_subreaper, die_with_parent

EXIT_NOT_STARTED = 127
EXIT_NOT_CONFINED = 126


@dataclass
class Start:
    """How to start the program: the keeper's command line, parsed."""

    clock: int
    program: list[str]
    join: list[str] = field(default_factory=list)
    bind: list[tuple[str, str]] = field(default_factory=list)
    user: tuple[int, int] | None = None
    environment: dict[str, str] | None = None
    fsize: int | None = None
    view: list[str] = field(default_factory=list)  # bound targets covered by a read-only overlay of themselves

    def arguments(self) -> list[str]:
        """The command line :func:`parse` reads back."""
        args = [str(self.clock)]
        for procs in self.join:
            args += ["--join", procs]
        for source, target in self.bind:
            args += ["--bind", source, target]
        for target in self.view:
            args += ["--view", target]
        if self.user is not None:
            args += ["--user", f"{self.user[0]}:{self.user[1]}"]
        for name, value in (self.environment or {}).items():
            args += ["--env", f"{name}={value}"]
        if self.fsize is not None:
            args += ["--fsize", str(self.fsize)]
        return [*args, "--", *self.program]


def parse(argv: list[str]) -> Start:
    start = Start(int(argv[0]), [])
    rest = argv[1:]
    while rest and rest[0] != "--":
        if rest[0] == "--join":
            start.join.append(rest[1])
            rest = rest[2:]
        elif rest[0] == "--bind":
            start.bind.append((rest[1], rest[2]))
            rest = rest[3:]
        elif rest[0] == "--view":
            start.view.append(rest[1])
            rest = rest[2:]
        elif rest[0] == "--user":
            uid, gid = rest[1].split(":")
            start.user = (int(uid), int(gid))
            rest = rest[2:]
        elif rest[0] == "--env":
            name, _, value = rest[1].partition("=")
            start.environment = {**(start.environment or {}), name: value}
            rest = rest[2:]
        elif rest[0] == "--fsize":
            start.fsize = int(rest[1])
            rest = rest[2:]
        else:
            raise SystemExit(f"keeper: unknown option {rest[0]!r}")
    start.program = rest[1:]
    return start


def main(argv: list[str]) -> int:
    die_with_parent()
    become_subreaper()
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # only SIGKILL from podium ends the keeper
    start = parse(argv)
    clock = start.clock
    os.write(clock, f"{time.monotonic()!r}\n".encode())
    program = os.fork()
    if program == 0:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.set_inheritable(clock, False)  # closed when the program starts
        _exec(start)
    code = EXIT_NOT_STARTED
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:  # no descendant is left
            os.write(clock, f"{time.monotonic()!r}\n".encode())
            return code
        if pid == program:
            code = os.waitstatus_to_exitcode(status)
            code = 128 - code if code < 0 else code


def _exec(start: Start) -> None:
    """In the program's process: confine it, then become the program (never returns)."""
    try:
        confine.join_groups(start.join)
        confine.bind_privately(start.bind, start.view)
        if start.user is not None:
            confine.drop_to(*start.user)
        if start.fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (start.fsize, start.fsize))
            confine.forbid_preallocation()
    except OSError as exc:
        os.write(start.clock, f"!{exc.strerror or exc}\n".encode())
        os._exit(EXIT_NOT_CONFINED)
    try:
        if start.environment is None:
            os.execvp(start.program[0], start.program)
        os.execvpe(start.program[0], start.program, start.environment)
    except OSError as exc:
        os.write(2, f"podium: cannot start {start.program[0]!r}: {exc.strerror}\n".encode())
    os._exit(EXIT_NOT_STARTED)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
