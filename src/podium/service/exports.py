"""Every submission, or every result document, of a contest as one zip archive, streamed as it is written.

The archive is written to the response as it is made (zip's data
descriptors need no seeking back): the server holds one chunk of a file
(:data:`CHUNK`) or one batch of result documents (:data:`BATCH`) at a time,
whatever the archive's size, and no database transaction stays open while the
browser reads. Zip64 is used, so an archive may pass 4 GiB.

``submissions``: each submission's stored files, as the team uploaded them
(a file, or the members of its archive) under ``submissions/ID-TEAM/``, and
``submissions.json`` listing each (id, team, track, phase, file, sha256,
status, sent). ``results``: each result document of every round, the full
one (private scores included) under ``results/ID-rROUND.json``. Only regular
files are read; a link in a submission's folder is skipped.
"""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, select

from podium.service import scoped
from podium.service.database import reading
from podium.service.intake import UPLOADED, submission_folder
from podium.service.tables import results, submissions, teams

WHAT = ("submissions", "results")
CHUNK = 1 << 20  # bytes read from a file, and written out, at a time
BATCH = 100  # result documents read from the database at a time


class _Sink:
    """What the zip writer writes to: bytes kept until the response takes them (it never seeks)."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.size = 0

    def write(self, data: bytes) -> int:
        self.parts.append(bytes(data))
        self.size += len(data)
        return len(data)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass

    def take(self) -> bytes:
        data, self.parts, self.size = b"".join(self.parts), [], 0
        return data


Member = tuple[str, datetime, Callable[[], Iterator[bytes]]]  # a name in the archive, its time, its bytes


def zipped(members: Iterator[Member], compression: int) -> Iterator[bytes]:
    """The zip archive of ``members``, chunk by chunk (none much larger than :data:`CHUNK`)."""
    sink = _Sink()
    with zipfile.ZipFile(sink, "w", compression=compression, allowZip64=True) as archive:
        for name, when, chunks in members:
            info = zipfile.ZipInfo(name, when.timetuple()[:6])
            info.compress_type = compression
            with archive.open(info, "w", force_zip64=True) as member:
                for chunk in chunks():
                    member.write(chunk)
                    if sink.size >= CHUNK:
                        yield sink.take()
            yield sink.take()
    yield sink.take()


def _file(path: Path) -> Callable[[], Iterator[bytes]]:
    def chunks() -> Iterator[bytes]:
        with path.open("rb") as file:
            while chunk := file.read(CHUNK):
                yield chunk

    return chunks


def _bytes(data: bytes) -> Callable[[], Iterator[bytes]]:
    return lambda: iter((data,))


def submission_list(connection: Connection, contest: str, tracks: list[str]) -> list[dict[str, Any]]:
    """The submissions of ``contest``'s teams to ``tracks``, oldest first, as ``submissions.json`` lists them."""
    query = (
        select(
            submissions.c.id,
            teams.c.name.label("team"),
            submissions.c.track,
            submissions.c.phase,
            submissions.c.filename,
            submissions.c.sha256,
            submissions.c.status,
            submissions.c.created,
        )
        .join(teams)
        .where(submissions.c.track.in_(tracks), teams.c.contest == contest)
        .order_by(submissions.c.id)
    )
    return [{**row._asdict(), "created": row.created.isoformat()} for row in connection.execute(query)]


def submission_members(engine: Engine, data: Path, contest: str, tracks: list[str], now: datetime) -> Iterator[Member]:
    """Each submission's stored files (its unpacked files; not the upload kept as sent, which repeats them), then ``submissions.json``."""
    with reading(engine) as connection:
        listed = submission_list(connection, contest, tracks)
    for row in listed:
        folder = submission_folder(data, row["id"])
        for root, folders, files in os.walk(folder):  # links to folders are not followed
            folders.sort()
            for name in sorted(files):
                path = Path(root, name)
                inside = path.relative_to(folder).as_posix()
                if path.is_symlink() or not path.is_file() or inside == UPLOADED:
                    continue
                yield (
                    f"submissions/{row['id']}-{row['team']}/{inside}",
                    datetime.fromisoformat(row["created"]),
                    _file(path),
                )
    yield "submissions.json", now, _bytes(json.dumps(listed, indent=1, ensure_ascii=False).encode())


def result_members(engine: Engine, contest: str, tracks: list[str]) -> Iterator[Member]:
    """Each result document of every round of ``contest``'s submissions to ``tracks``, read :data:`BATCH` at a time."""
    on_tracks = select(submissions.c.id).where(scoped.on_tracks(contest, tracks))
    with reading(engine) as connection:
        ids = (
            connection.execute(
                select(results.c.id).where(results.c.submission_id.in_(on_tracks)).order_by(results.c.id)
            )
            .scalars()
            .all()
        )
    for start in range(0, len(ids), BATCH):
        with reading(engine) as connection:
            rows = connection.execute(
                select(results.c.submission_id, results.c.round, results.c.document, results.c.created)
                .where(results.c.id.in_(ids[start : start + BATCH]))
                .order_by(results.c.id)
            ).all()
        for row in rows:
            document = json.dumps(row.document, indent=1, ensure_ascii=False).encode()
            yield f"results/{row.submission_id}-r{row.round}.json", row.created, _bytes(document)


def archive(engine: Engine, data: Path, contest: str, tracks: list[str], what: str, now: datetime) -> Iterator[bytes]:
    """The zip of ``what`` (``submissions`` or ``results``) of ``contest``'s ``tracks``, streamed."""
    if what == "submissions":
        return zipped(submission_members(engine, data, contest, tracks, now), zipfile.ZIP_STORED)
    return zipped(result_members(engine, contest, tracks), zipfile.ZIP_DEFLATED)


def write(engine: Engine, data: Path, contest: str, tracks: list[str], what: str, out: Path, now: datetime) -> int:
    """Write the archive of ``what`` to ``out`` (through a temporary file beside it); its size in bytes."""
    partial = out.with_name(out.name + ".partial")
    size = 0
    with partial.open("wb") as file:
        for chunk in archive(engine, data, contest, tracks, what, now):
            file.write(chunk)
            size += len(chunk)
    partial.replace(out)
    return size
