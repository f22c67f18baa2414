"""The words a result document is written with: its statuses and the splits of a contest's test set.

Kept apart from :mod:`podium.core.result` (which needs NumPy) so that the command's options and
light commands (``podium --help``, ``podium challenges``) name them without loading NumPy.
"""

from __future__ import annotations

from typing import Final, Literal

Status = Literal["scored", "rejected"]
SCORED: Final = "scored"
REJECTED: Final = "rejected"
PUBLIC: Final = "public"  # the splits of a contest's test set
PRIVATE: Final = "private"
