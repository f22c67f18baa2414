"""Where a run's temporary folders lie, and which process made each: what :mod:`podium.runner.workdir` makes them
by and :mod:`podium.runner.volume` sweeps the file systems of dead runs by.

A run's folders are made in ``/tmp`` or ``/var/tmp`` (:data:`NEUTRAL_PARENTS`), never in the server's own
``TMPDIR``: a sandbox's mount table (``/proc/self/mountinfo``) names the source folder of every bind, so a
``TMPDIR=/srv/contest-data/tmp`` would tell the program where the server keeps its data. Each is named
``PREFIX<pid>-<random>`` after the process that made it.
"""

from __future__ import annotations

import os
import re
import tempfile

RUN_PREFIX = "podium-run-"  # a run's own temporary folder: its working folder, its code's linked copy
STAGE_PREFIX = "podium-stage-"  # the staging mount points of a sandbox started as root
NEUTRAL_PARENTS = ("/tmp", "/var/tmp")  # where a run's folders are made: their paths name nothing of the server
_MADE_BY = re.compile(rf"^(?:{RUN_PREFIX}|{STAGE_PREFIX})([0-9]+)-")
PID_MAX = 1 << 22  # the kernel's largest process id (PID_MAX_LIMIT, the ceiling of /proc/sys/kernel/pid_max)


def temporary_parents() -> tuple[str, ...]:
    """Where podium's run folders may lie: :data:`NEUTRAL_PARENTS`, and the temporary folder (``TMPDIR``), where
    podium 0.12 and earlier made them."""
    return tuple(dict.fromkeys((*NEUTRAL_PARENTS, tempfile.gettempdir())))


def abandoned(name: str) -> bool:
    """Whether ``name`` is a run folder's name whose process no longer exists.

    A process id reused since is taken as alive: its folders stay, never another run's. A name no process could have
    made (a process id past what the kernel gives, ``podium-run-99999999999999999999-x``, which anyone may make in
    ``/tmp``) is not a run folder's: left as it is, where its ``os.kill`` raised and stopped every worker's start.
    """
    made_by = _MADE_BY.match(name)
    return made_by is not None and int(made_by.group(1)) <= PID_MAX and not _alive(int(made_by.group(1)))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
