"""Listing submission and truth folders without ever leaving them.

Symbolic links, FIFOs, sockets and devices inside a folder are never followed
or opened: a participant's upload could use them to make podium read files
outside the submission or block forever. They are reported instead. So are
hard links in a submission (a file with more than one name): a program could
link the truth or another team's file into its output folder.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from podium.core.issues import IssueLog, summarize_names


@dataclass
class Listing:
    """The entries of one folder, sorted by name."""

    files: list[Path] = field(default_factory=list)
    folders: list[Path] = field(default_factory=list)
    refused: list[tuple[Path, str]] = field(default_factory=list)  # (path, why)


def list_folder(folder: Path, refuse_hard_links: bool = True) -> Listing:
    """Regular files and real sub-folders of ``folder``; everything else is refused.

    ``refuse_hard_links=False`` for the organizer's own folders (the truth).
    """
    listing = Listing()
    with os.scandir(folder) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            path = folder / entry.name
            if entry.is_symlink():
                listing.refused.append((path, "is a symbolic link; links are not accepted"))
            elif entry.is_dir(follow_symlinks=False):
                listing.folders.append(path)
            elif not entry.is_file(follow_symlinks=False):
                listing.refused.append((path, "is not a regular file or folder"))
            elif refuse_hard_links and (links := entry.stat(follow_symlinks=False).st_nlink) > 1:
                listing.refused.append(
                    (path, f"is a hard link (one of {links} names of a file); links are not accepted")
                )
            else:
                listing.files.append(path)
    return listing


def stem_of(path: Path, extensions: tuple[str, ...]) -> str | None:
    """The file name without its extension if the extension is one of ``extensions`` (any case)."""
    name = path.name
    lower = name.lower()
    for extension in extensions:
        if lower.endswith(extension) and len(name) > len(extension):
            return name[: -len(extension)]
    return None


def one_level_down(root: Path, log: IssueLog) -> bool:
    """Reject, with a hint, a submission folder that holds nothing but one folder.

    That is how a zipped folder often arrives: ``team/team/*.png``.
    """
    listing = list_folder(root)
    if listing.files or listing.refused or len(listing.folders) != 1:
        return False
    inner = listing.folders[0].name
    log.error(
        "one_level_down",
        f"the files seem to be one level down, in {root.name}/{inner}; submit that folder instead",
        root,
    )
    return True


def single_file(submission: Path, suffixes: tuple[str, ...], log: IssueLog) -> Path | None:
    """The submission file itself, or the one file with one of ``suffixes`` in a submission folder."""
    if submission.is_file():
        return submission
    if not submission.is_dir():
        log.error("not_a_file", "the submission is neither a regular file nor a folder", submission)
        return None
    listing = list_folder(submission)
    kinds = "/".join(suffixes)
    for path, why in listing.refused:
        if path.suffix.lower() in suffixes:
            log.error("not_a_file", why, path)
    found = [p for p in listing.files if p.suffix.lower() in suffixes]
    if len(found) == 1:
        return found[0]
    if not found and not log.error_count and not one_level_down(submission, log):
        log.error("no_file", f"the submission folder holds no {kinds} file", submission)
    elif found:
        log.error(
            "several_files",
            f"the submission folder holds {len(found)} {kinds} files: {summarize_names(p.name for p in found)}",
            submission,
        )
    return None
