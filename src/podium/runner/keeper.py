"""The keeper: parent of a participant's program and of every process the program leaves behind.

``python -m podium.runner.keeper PROGRAM [ARGS...]`` makes itself a child
subreaper, starts the program, and reaps every descendant until none is left
(orphans are re-parented to it, not to init); then it exits with the program's
exit code, 128 + N if signal N ended it. The caller measures and kills the
keeper's descendants only, so running a program never touches the caller's
other children and never makes the caller a subreaper. The keeper dies with its
parent (``PR_SET_PDEATHSIG``).
"""

from __future__ import annotations

import os
import signal
import sys

from podium.runner.tree import become_subreaper, die_with_parent

EXIT_NOT_STARTED = 127


def main(argv: list[str]) -> int:
    die_with_parent()
    become_subreaper()
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # only SIGKILL from podium ends the keeper
    program = os.fork()
    if program == 0:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        try:
            os.execvp(argv[0], argv)
        except OSError as exc:
            os.write(2, f"podium: cannot start {argv[0]!r}: {exc.strerror}\n".encode())
        os._exit(EXIT_NOT_STARTED)
    code = EXIT_NOT_STARTED
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            return code  # no descendant is left
        if pid == program:
            code = os.waitstatus_to_exitcode(status)
            code = 128 - code if code < 0 else code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
