"""The sandboxes a participant's program may run in, by the names ``--sandbox`` takes, and the disk a program's
working folder may fill unless told otherwise.

Named apart from :mod:`podium.runner.sandbox` (which loads subprocess, tempfile and the keeper) and
:mod:`podium.runner.disk` (subprocess, ctypes, shutil) so that ``podium --help`` and the commands that run no
program (``podium evaluate``) name them without loading those.
"""

from __future__ import annotations

SANDBOXES = (
    "auto",
    "bwrap",
    "docker",
    "none",
)  # auto: bubblewrap for a command, Docker for an image (runner.sandbox.choose)

DEFAULT_DISK_MB = 1024.0  # far above what any program contract's outputs take
