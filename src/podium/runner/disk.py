"""The disk a program may fill: its working folder, bounded while it runs."""

from __future__ import annotations

DEFAULT_DISK_MB = 1024.0  # far above what any program contract's outputs take
