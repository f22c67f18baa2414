"""The data page's downloads: the contest's public files (looked up by name, never joined to a path), their SHA-256, each track's kit.

A file is served only when its name is one the contest file lists (``[data]
files``), and only while it is still a regular file reached without a
symbolic link: the contest check refuses the truth, the test images and any
path leading out of the contest's folder, and this check at each download
refuses a file replaced by a link since. Each file's SHA-256 is computed
once for each change of it (its modification time and size key the cache).
A track's starting kit is built from the contest file into ``DATA/kits``
once for each change of its inputs, and served from there.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable
from pathlib import Path

from podium.contest import Contest, ContestError
from podium.contest.public_paths import reached_plainly
from podium.publish.kit import build_kit, command, kit_name, members, tried

log = logging.getLogger("podium.serve")
_digests: dict[tuple[str, int, int], str] = {}
_building = threading.Lock()  # one kit built at a time in this process


def sha256_of(path: Path) -> tuple[int, str]:
    """``path``'s size and SHA-256, computed once for each change of the file."""
    status = path.stat()
    key = (str(path), status.st_mtime_ns, status.st_size)
    if key not in _digests:
        with path.open("rb") as file:
            _digests[key] = hashlib.file_digest(file, "sha256").hexdigest()
    return status.st_size, _digests[key]


def served_file(contest: Contest, name: str) -> Path | None:
    """The public file listed under exactly ``name``, if it is still a regular file reached without a symbolic link."""
    found = contest.content.file(name)
    return found.path if found is not None and reached_plainly(contest.path.parent, found.name) else None


def kit_tracks(contest: Contest) -> list[Contest]:
    """The contest's tracks that offer a starting kit, in the file's order."""
    return [track for track in contest.tracks or (contest,) if track.kit is not None]


def kit_file(data: Path, track: Contest) -> Path:
    """The track's kit in ``DATA/kits``, built if its inputs (the contest file, the sample, the baseline) changed."""
    stamp = hashlib.sha256(track.path.read_bytes() + track.track_id.encode())
    for name, source in members(track):
        stamp.update(name.encode() + b"\0")
        if isinstance(source, Path):
            status = source.stat()
            stamp.update(f"{status.st_size} {status.st_mtime_ns}\0".encode())
        else:
            stamp.update(source)
    folder = data / "kits"
    out = folder / f"{kit_name(track)}-{stamp.hexdigest()[:16]}.zip"
    with _building:
        if not out.is_file():
            build_kit(track, out)
            try:
                tried(out, track)  # a kit whose command would fail is not offered
            except ContestError:
                out.unlink(missing_ok=True)
                raise
            for old in folder.glob(f"{kit_name(track)}-*.zip"):
                if old != out:
                    old.unlink(missing_ok=True)
    return out


def listing(contest: Contest, data: Path, url: Callable[[str], str]) -> dict[str, object]:
    """The data page's content (:class:`~podium.service.models.DataView`); ``url`` makes a path of the app a link."""
    from urllib.parse import quote

    files = []
    for public in contest.content.files:
        if served_file(contest, public.name) is None:
            continue  # removed, or replaced by a link, since the contest was checked: not offered
        size, digest = sha256_of(public.path)
        files.append(
            {"name": public.name, "bytes": size, "sha256": digest, "url": url("/data/files/" + quote(public.name))}
        )
    kits = []
    for track in kit_tracks(contest):
        try:
            size, digest = sha256_of(kit_file(data, track))
        except ContestError as exc:
            log.warning("the starting kit of %s is not offered: %s", track.track_id, exc)
            continue
        query = f"?track={quote(track.track)}" if track.track else ""
        kits.append(
            {
                "name": kit_name(track) + ".zip",
                "bytes": size,
                "sha256": digest,
                "url": url("/data/kit.zip" + query),
                "track": track.track_id,
                "title": track.track_title or track.title,
                "command": command(track),
            }
        )
    links = [link.model_dump() for link in contest.content.links]
    return {"files": files, "links": links, "kits": kits}
