"""Listing submission and truth folders without ever leaving them.

Symbolic links, FIFOs, sockets and devices inside a folder are never followed
or opened: a participant's upload could use them to make podium read files
outside the submission or block forever. They are reported instead.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Listing:
    """The entries of one folder, sorted by name."""

    files: list[Path] = field(default_factory=list)
    folders: list[Path] = field(default_factory=list)
    refused: list[tuple[Path, str]] = field(default_factory=list)  # (path, why)


def list_folder(folder: Path) -> Listing:
    """Regular files and real sub-folders of ``folder``; everything else is refused."""
    listing = Listing()
    with os.scandir(folder) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            path = folder / entry.name
            if entry.is_symlink():
                listing.refused.append((path, "is a symbolic link; links are not accepted"))
            elif entry.is_dir(follow_symlinks=False):
                listing.folders.append(path)
            elif entry.is_file(follow_symlinks=False):
                listing.files.append(path)
            else:
                listing.refused.append((path, "is not a regular file or folder"))
    return listing


def stem_of(path: Path, suffixes: tuple[str, ...]) -> str | None:
    """The file name without its extension if the extension is one of ``suffixes``."""
    name = path.name
    lower = name.lower()
    for suffix in suffixes:
        if lower.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return None
