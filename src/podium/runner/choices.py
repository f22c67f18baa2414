"""The sandboxes a participant's program may run in, by the names ``--sandbox`` takes.

Named apart from :mod:`podium.runner.sandbox` (which loads subprocess, tempfile and the keeper) so that
``podium --help`` lists them without loading those.
"""

from __future__ import annotations

SANDBOXES = (
    "auto",
    "bwrap",
    "docker",
    "none",
)  # auto: bubblewrap for a command, Docker for an image (runner.sandbox.choose)
