"""The keeper: parent of a participant's program and of every process the program leaves behind.

``python -m podium.runner.keeper FD PROGRAM [ARGS...]`` makes itself a child
subreaper, starts the program, and reaps every descendant until none is left
(orphans are re-parented to it, not to init); then it exits with the program's
exit code, 128 + N if signal N ended it. On file descriptor FD it writes the
``CLOCK_MONOTONIC`` time at which it started the program and, on the next line,
the time at which the last process ended, so the program's wall time excludes
the keeper's own start-up. The caller measures and kills the
keeper's descendants only, so running a program never touches the caller's
other children and never makes the caller a subreaper. The keeper dies with its
parent (``PR_SET_PDEATHSIG``).
"""

from __future__ import annotations

import os
import signal
import sys
import time

from podium.runner.tree import become_subreaper, die_with_parent

EXIT_NOT_STARTED = 127


def main(argv: list[str]) -> int:
    die_with_parent()
    become_subreaper()
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # only SIGKILL from podium ends the keeper
    clock, argv = int(argv[0]), argv[1:]
    os.write(clock, f"{time.monotonic()!r}\n".encode())
    program = os.fork()
    if program == 0:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.close(clock)
        try:
            os.execvp(argv[0], argv)
        except OSError as exc:
            os.write(2, f"podium: cannot start {argv[0]!r}: {exc.strerror}\n".encode())
        os._exit(EXIT_NOT_STARTED)
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


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
