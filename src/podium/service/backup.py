"""``podium backup`` and ``podium restore``: a running contest in one archive, and back.

The archive is a tar, uncompressed (the submissions are mostly compressed
images already) unless ``OUT``'s name ends in ``.gz`` or ``.tgz`` (gzip) or ``.xz``;
restore reads each kind. It holds, in this order:

- ``manifest.json``: the format, podium's version, the database's kind and
  Alembic revision, the contest's id, the rows of every table and the SHA-256
  and size of every other member;
- ``podium.sqlite3`` (SQLite's online backup API: a consistent copy while the
  service writes) or ``database.sql`` (``pg_dump``'s plain SQL, without owners
  or privileges, from one snapshot);
- ``submissions/ID/...``: the stored submission of every row of that snapshot.
  A submission's folder is in place before its row is committed
  (:func:`podium.service.intake.take`), so every row has its files; uploads
  that arrive after the snapshot are in the next backup.

Results, rounds, teams, users and tokens are rows of the database. Restoring
refuses a target that holds anything, checks every member against the
manifest before writing, migrates the restored database to this podium's
schema, checks that every table holds the rows the manifest counts, and
forgets the heartbeats of the backed-up server's workers.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import lzma
import os
import shutil
import sqlite3
import subprocess
import tarfile
import tempfile
import zlib
from collections.abc import Iterator
from contextlib import closing
from datetime import UTC, datetime
from itertools import islice
from pathlib import Path, PurePosixPath
from typing import IO, Any, Literal

from sqlalchemy import Engine, func, inspect, make_url, select

from podium._version import __version__
from podium.core.errors import UsageError
from podium.service import heartbeats, state
from podium.service.database import SQLITE_FILE, connect, database_url, migrate, reading, schema_revision, writing
from podium.service.intake import submission_folder
from podium.service.tables import metadata, submissions

FORMAT = "podium-backup"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
SQL_DUMP = "database.sql"
SUBMISSIONS = "submissions"
CHUNK = 1 << 20


def postgres_tool(name: str) -> Path:
    """``pg_dump`` or ``psql``: the newest PostgreSQL's (``/usr/lib/postgresql/N/bin``), else the one on PATH."""
    found = sorted(
        Path("/usr/lib/postgresql").glob(f"*/bin/{name}"), key=lambda p: int(p.parts[4]) if p.parts[4].isdigit() else 0
    )
    if found:
        return found[-1]
    on_path = shutil.which(name)
    if on_path is None:
        raise UsageError(
            f"{name} is not installed; it comes with PostgreSQL's client programs (Debian: apt-get install postgresql-client)"
        )
    return Path(on_path)


def _libpq_environment(url: str) -> dict[str, str]:
    """The connection as libpq's variables, so that no password shows on a command line."""
    parsed = make_url(url)
    variables = {
        "PGHOST": parsed.host,
        "PGPORT": str(parsed.port) if parsed.port else None,
        "PGUSER": parsed.username,
        "PGPASSWORD": parsed.password,
        "PGDATABASE": parsed.database,
    }
    return {**os.environ, **{key: value for key, value in variables.items() if value}}


def _run(command: list[str], url: str, what: str) -> None:
    done = subprocess.run(command, env=_libpq_environment(url), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise UsageError(
            f"{what} failed ({Path(command[0]).name} exit code {done.returncode}): {done.stderr.strip()[-2000:]}"
        )


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for chunk in iter(lambda: stream.read(CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _row_counts(engine: Engine) -> dict[str, int]:
    with reading(engine) as connection:
        return {
            table.name: int(connection.execute(select(func.count()).select_from(table)).scalar_one())
            for table in metadata.sorted_tables
        }


def _snapshot(url: str, folder: Path) -> tuple[Path, dict[str, int], list[int]]:
    """A consistent copy of the database in ``folder``, taken while the service writes: the copy, its rows per table, its submissions."""
    if make_url(url).get_backend_name() == "sqlite":
        source_path = str(make_url(url).database)
        copy = folder / SQLITE_FILE
        with closing(sqlite3.connect(source_path, timeout=30)) as source, closing(sqlite3.connect(copy)) as target:
            source.backup(target)
        engine = connect(database_url(None, folder))
        try:
            counts = _row_counts(engine)
            with reading(engine) as connection:
                ids = [
                    int(i) for i in connection.execute(select(submissions.c.id).order_by(submissions.c.id)).scalars()
                ]
        finally:
            engine.dispose()
        return copy, counts, ids
    dump = folder / SQL_DUMP
    _run(
        [str(postgres_tool("pg_dump")), "--no-owner", "--no-privileges", "--format=plain", f"--file={dump}"],
        url,
        "pg_dump",
    )
    counts, ids = _dump_rows(dump)
    return dump, counts, ids


def backup(data: Path, database: str | None, out: Path) -> dict[str, Any]:
    """Write the contest served from ``data`` (and ``database``) to the archive ``out``; its manifest."""
    url = database_url(database, data)
    if out.exists():
        raise UsageError(f"{out} exists; podium backup writes a new file")
    if not out.resolve().parent.is_dir():
        raise UsageError(f"{out.parent} is not a folder")
    sqlite_file = make_url(url).database if make_url(url).get_backend_name() == "sqlite" else None
    if sqlite_file is not None and not Path(sqlite_file).is_file():  # connecting would make an empty one
        raise UsageError(f"no database at {sqlite_file}: is --data the contest's folder?")
    live = connect(url)
    try:
        with reading(live) as connection:
            contest = ", ".join(state.served_ids(connection)) or None
        revision = schema_revision(live)
    finally:
        live.dispose()
    with tempfile.TemporaryDirectory(prefix="podium-backup-", dir=out.resolve().parent) as scratch:
        snapshot, counts, ids = _snapshot(url, Path(scratch))
        files = {snapshot.name: _member(snapshot)}
        members = [(snapshot.name, snapshot)]
        for submission_id in ids:
            folder = submission_folder(data, submission_id)
            for path in sorted(_files_under(folder)):
                name = str(PurePosixPath(SUBMISSIONS, str(submission_id), *path.relative_to(folder).parts))
                files[name] = _member(path)
                members.append((name, path))
        manifest = {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "podium": __version__,
            "created": datetime.now(UTC).isoformat(),
            "database": make_url(url).get_backend_name(),
            "revision": revision,
            "contest": contest,
            "rows": counts,
            "submissions": ids,
            "files": files,
        }
        partial = out.with_name(out.name + ".partial")
        with tarfile.open(partial, write_mode(out), format=tarfile.PAX_FORMAT) as archive:
            _add_bytes(archive, MANIFEST, json.dumps(manifest, indent=1).encode())
            for name, path in members:
                archive.add(path, arcname=name, recursive=False)
        partial.rename(out)
    return manifest


WRITE_MODES: dict[str, Literal["w:gz", "w:xz"]] = {".gz": "w:gz", ".tgz": "w:gz", ".xz": "w:xz"}
DAMAGED = (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile, lzma.LZMAError)  # a cut or changed archive


def write_mode(out: Path) -> Literal["w", "w:gz", "w:xz"]:
    """tarfile's mode for the archive named ``out``: compressed as its suffix says (``.tar.gz``: gzip), else not.

    >>> write_mode(Path("contest.tar.gz")), write_mode(Path("contest.tar"))
    ('w:gz', 'w')
    """
    return WRITE_MODES.get(out.suffix.lower(), "w")


def _files_under(folder: Path) -> Iterator[Path]:
    """The regular files under ``folder`` (a submission's folder holds nothing else)."""
    for root, _dirs, names in os.walk(folder):
        for name in names:
            path = Path(root) / name
            if path.is_file() and not path.is_symlink():
                yield path


def _member(path: Path) -> dict[str, Any]:
    return {"sha256": _sha256(path), "size": path.stat().st_size}


def _add_bytes(archive: tarfile.TarFile, name: str, content: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(content)
    info.mtime = int(datetime.now(UTC).timestamp())
    archive.addfile(info, io.BytesIO(content))


def _dump_rows(dump: Path) -> tuple[dict[str, int], list[int]]:
    """Rows of each of podium's tables in a plain ``pg_dump`` (the lines between ``COPY public.T`` and ``\\.``), and the submissions' ids."""
    counts = {table.name: 0 for table in metadata.sorted_tables}
    ids: list[int] = []
    current: str | None = None
    with dump.open(encoding="utf-8") as lines:
        for line in lines:
            if current is None:
                if line.startswith("COPY public."):
                    name, columns = line[len("COPY public.") :].split(" ", 1)
                    current = name.strip('"') if name.strip('"') in counts else ""
                    if current == submissions.name and not columns.startswith("(id,"):
                        raise UsageError(
                            "pg_dump wrote the submissions without their id first; podium cannot read this dump"
                        )
            elif line == "\\.\n":
                current = None
            elif current:
                counts[current] += 1
                if current == submissions.name:
                    ids.append(int(line.split("\t", 1)[0]))
    return counts, sorted(ids)


def _safe_name(name: str) -> PurePosixPath:
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts or not path.parts:
        raise UsageError(
            f"the backup's member {name!r} would be written outside the target; this is not a podium backup"
        )
    return path


def read_manifest(archive: tarfile.TarFile, where: Path) -> dict[str, Any]:
    """The archive's manifest, checked: its format and version, and that it names what the archive holds."""
    first = archive.next()
    if first is None or first.name != MANIFEST or not first.isfile():
        raise UsageError(f"{where}: not a podium backup (its first member is not {MANIFEST})")
    stream = archive.extractfile(first)
    assert stream is not None
    try:
        manifest = json.loads(stream.read(16 << 20))
    except ValueError as exc:
        raise UsageError(f"{where}: {MANIFEST} is not JSON: {exc}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise UsageError(f"{where}: {MANIFEST} is not a podium backup's manifest")
    if manifest.get("version") != FORMAT_VERSION:
        raise UsageError(
            f"{where}: backup format {manifest.get('version')!r}; this podium ({__version__}) reads format {FORMAT_VERSION}"
        )
    if not isinstance(manifest.get("files"), dict) or not isinstance(manifest.get("rows"), dict):
        raise UsageError(f"{where}: {MANIFEST} lacks its files or rows")
    return manifest


def _extract(archive: tarfile.TarFile, manifest: dict[str, Any], target: Path, where: Path) -> None:
    """Every member into ``target``, each checked against the manifest's size and SHA-256 as it is written."""
    expected: dict[str, dict[str, Any]] = manifest["files"]
    seen = set()
    for member in islice(archive, 1, None):  # after the manifest
        _safe_name(member.name)
        entry = expected.get(member.name)
        if entry is None or not member.isfile() or member.name in seen:
            raise UsageError(
                f"{where}: member {member.name!r} is not in the manifest (or not a file, or twice); the archive was changed"
            )
        if member.size != entry["size"]:
            raise UsageError(
                f"{where}: member {member.name!r} has {member.size:,} bytes; the manifest says {entry['size']:,}"
            )
        seen.add(member.name)
        path = target / member.name
        path.parent.mkdir(parents=True, exist_ok=True)
        source = archive.extractfile(member)
        assert source is not None
        _copy_checked(source, path, entry["sha256"], where, member.name)
    missing = sorted(set(expected) - seen)
    if missing:
        raise UsageError(
            f"{where}: {len(missing)} member{'s' * (len(missing) != 1)} of the manifest missing, first {missing[0]!r}; the archive is cut short"
        )


def _copy_checked(source: IO[bytes], path: Path, sha256: str, where: Path, name: str) -> None:
    digest = hashlib.sha256()
    with path.open("xb") as out:
        for chunk in iter(lambda: source.read(CHUNK), b""):
            digest.update(chunk)
            out.write(chunk)
    if digest.hexdigest() != sha256:
        raise UsageError(f"{where}: member {name!r} does not match its SHA-256 in the manifest; the archive is damaged")


def _empty_database(url: str) -> None:
    engine = connect(url)
    try:
        with reading(engine) as connection:
            tables = inspect(connection).get_table_names()
    finally:
        engine.dispose()
    if tables:
        raise UsageError(
            f"the database {make_url(url).render_as_string(hide_password=True)} holds tables ({', '.join(sorted(tables)[:5])}); restore into an empty one"
        )


def restore(archive_path: Path, data: Path, database: str | None) -> dict[str, Any]:
    """Restore the backup ``archive_path`` into the empty folder ``data`` (and the empty ``database``); its manifest."""
    if data.exists() and (not data.is_dir() or any(data.iterdir())):
        raise UsageError(f"{data} is not an empty folder; podium restore writes only into an empty or new one")
    url = database_url(database, data)
    try:
        archive = tarfile.open(archive_path, "r:*")  # noqa: SIM115 (closed by the with below); any compression
    except (OSError, tarfile.TarError) as exc:
        raise UsageError(f"{archive_path}: not a podium backup ({exc})") from None
    with archive, tempfile.TemporaryDirectory(prefix="podium-restore-") as scratch:
        try:
            manifest = read_manifest(archive, archive_path)
        except DAMAGED as exc:
            raise UsageError(f"{archive_path}: the archive is damaged ({exc})") from None
        kind = make_url(url).get_backend_name()
        if manifest.get("database") != kind:
            raise UsageError(
                f"{archive_path} is a backup of a {manifest.get('database')} database; restore it into one "
                f"({'--database postgresql://...' if manifest.get('database') == 'postgresql' else 'without --database'})"
            )
        if kind == "postgresql":
            _empty_database(url)
        staged = Path(scratch) / "data"
        staged.mkdir()
        try:
            _extract(archive, manifest, staged, archive_path)
        except DAMAGED as exc:
            raise UsageError(f"{archive_path}: the archive is damaged ({exc})") from None
        if kind == "postgresql":
            dump = staged / SQL_DUMP
            _run(
                [
                    str(postgres_tool("psql")),
                    "--no-psqlrc",
                    "--quiet",
                    "-v",
                    "ON_ERROR_STOP=1",
                    "--single-transaction",
                    f"--file={dump}",
                ],
                url,
                "psql",
            )
            dump.unlink()
        else:
            database_file = Path(make_url(url).database or "")
            if database_file.exists():
                raise UsageError(f"{database_file} exists; podium restore writes a new database")
            database_file.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(staged / SQLITE_FILE, database_file)
        data.mkdir(parents=True, exist_ok=True)
        for item in staged.iterdir():
            shutil.move(item, data / item.name)
    engine = connect(url)
    try:
        migrate(engine)
        counts = _row_counts(engine)
        short = {
            name: (rows, counts.get(name)) for name, rows in manifest["rows"].items() if counts.get(name, 0) < rows
        }
        if short:
            raise UsageError(f"the restored database lacks rows the manifest counts: {short}")
        with writing(engine) as connection:
            heartbeats.clear(connection)
    finally:
        engine.dispose()
    return manifest
