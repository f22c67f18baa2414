"""The reference folder: the truth as a platform hands it to a scoring program, and how podium writes one.

Reading (:func:`locate`): a folder holding a ``contest.toml`` scores by that
contest (challenge, truth, parameters, split). Otherwise the challenge is
named, the truth is the folder itself, its only file, or ``--truth NAME``
inside it, and relative paths of path parameters (ILSVRC's ``boxes``) are
taken inside the folder.

Writing (:func:`reference_of`): a contest's truth, the files of its path
parameters and its public units, with a ``contest.toml`` naming them by
relative paths, so that the folder scores the same on any machine::

    contest.toml          id, title, challenge, timezone, truth, [parameters], [split], [[phase]]
    truth/<name>          the truth file or folder, under its own name
    data/<parameter>/...  each path parameter's file or folder
    split/public.txt      a [split] given as a list: the public units, one per line

It becomes the ``reference_data`` of a Codabench bundle, the annotation file of
an EvalAI phase, or the ground truth of a Grand Challenge phase. Archives are
written byte for byte the same for the same contest (sorted names, fixed times).
"""

from __future__ import annotations

import gzip
import io
import json
import tarfile
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from podium._version import __version__
from podium.challenges import get
from podium.contest import Contest, Setup
from podium.contest import load as load_contest
from podium.core.errors import UsageError
from podium.core.parameters import parse_settings
from podium.core.result import PUBLIC

CONTEST_FILE = "contest.toml"
ZIP_TIME = (1980, 1, 1, 0, 0, 0)  # the earliest a zip can say: archives do not change with the clock


def locate(folder: Path, challenge: str | None, truth: str | None, settings: Sequence[str]) -> Setup:
    """What to score with, from the platform's reference folder (see the module docstring)."""
    if not folder.is_dir():
        raise UsageError(f"the reference folder {folder} does not exist")
    contest_file = folder / CONTEST_FILE
    if contest_file.is_file():
        contest = load_contest(contest_file)
        if challenge not in (None, contest.challenge):
            raise UsageError(
                f"the reference folder holds a {contest.challenge} contest ({contest_file}), not {challenge}"
            )
        if truth is not None or settings:
            raise UsageError(f"{contest_file} fixes the truth and the parameters; leave out --truth and --set")
        return Setup(contest.challenge, contest.truth, contest.settings, contest)
    if challenge is None:
        raise UsageError(f"name the CHALLENGE, or put a {CONTEST_FILE} in the reference folder {folder}")
    paths = {p.name for p in get(challenge).parameters if p.is_path}
    resolved = {
        key: str(folder / value) if key in paths and value.lower() != "none" else value
        for key, value in parse_settings(settings).items()
    }
    return Setup(challenge, _truth_in(folder, truth), resolved, None)


def _truth_in(folder: Path, name: str | None) -> Path:
    """``folder/name``, else the folder's only file (a truth table), else the folder."""
    if name is not None:
        path = folder / name
        if not path.exists():
            raise UsageError(f"--truth {name}: no such file or folder in the reference folder {folder}")
        return path
    entries = [p for p in folder.iterdir() if not p.name.startswith(".")]
    return entries[0] if len(entries) == 1 and entries[0].is_file() else folder


@dataclass(frozen=True)
class Reference:
    """A reference folder to write: its files (on disk, and their names in the folder) and its ``contest.toml``."""

    files: tuple[tuple[Path, str], ...]
    contest_toml: str
    public_list: str | None  # split/public.txt, when the split is a list

    def members(self) -> list[tuple[str, Path | bytes]]:
        """Every member, by name: a file on disk or generated text, in name order."""
        generated: list[tuple[str, Path | bytes]] = [(CONTEST_FILE, self.contest_toml.encode())]
        if self.public_list is not None:
            generated.append(("split/public.txt", self.public_list.encode()))
        return sorted([*generated, *((name, path) for path, name in self.files)], key=lambda m: m[0])

    def add_to_zip(self, archive: zipfile.ZipFile, prefix: str) -> None:
        """Write the folder into ``archive`` under ``prefix`` (``'reference_data/'``)."""
        for name, source in self.members():
            add_member(archive, prefix + name, source if isinstance(source, bytes) else source.read_bytes())

    def write_tar(self, target: Path) -> None:
        """Write the folder as a .tar.gz (EvalAI's annotation file, a Grand Challenge ground truth)."""
        with (
            open(target, "wb") as raw,
            gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as packed,  # the gzip header's time: fixed too
            tarfile.open(fileobj=packed, mode="w", format=tarfile.PAX_FORMAT) as archive,
        ):
            for name, source in self.members():
                data = source if isinstance(source, bytes) else source.read_bytes()
                info = tarfile.TarInfo(name)
                info.size, info.mode, info.mtime = len(data), 0o644, 0
                archive.addfile(info, io.BytesIO(data))


def add_member(archive: zipfile.ZipFile, name: str, data: bytes) -> None:
    """One deflated file of mode 644 at :data:`ZIP_TIME`: the same bytes whenever it is written."""
    info = zipfile.ZipInfo(name, ZIP_TIME)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o100644 << 16
    archive.writestr(info, data)


def reference_of(contest: Contest) -> Reference:
    """The reference folder of ``contest`` (see the module docstring); a contest of programs is refused."""
    programs = [p.name for p in contest.phases if p.submissions != "files"]
    if programs:
        raise UsageError(
            f"contest {contest.id}: phase {', '.join(programs)} takes programs; platform bundles score submitted files "
            "(run programs with podium serve, or as the platform's ingestion step)"
        )
    challenge = get(contest.challenge)
    truth_name = f"truth/{contest.truth.name}"
    files = _files(contest.truth, truth_name)
    settings = dict(contest.settings)
    for parameter in challenge.parameters:
        value = settings.get(parameter.name)
        if parameter.is_path and value is not None and value.lower() != "none":
            source = Path(value)
            settings[parameter.name] = f"data/{parameter.name}/{source.name}"
            files += _files(source, settings[parameter.name])
    public_list = None
    lines = [
        f"# The scoring part of contest {contest.id}, written by podium {__version__} from {contest.path.name}.",
        f"id = {_quoted(contest.id)}",
        f"title = {_quoted(contest.title)}",
        f"challenge = {_quoted(contest.challenge)}",
        f"truth = {_quoted(truth_name)}",
        f"timezone = {_quoted(contest.timezone.key)}",
    ]
    if settings:
        lines += ["", "[parameters]", *(f"{key} = {_quoted(text)}" for key, text in sorted(settings.items()))]
    if contest.split is not None:
        rule = contest.split.rule
        if "public_list" in rule:
            public_list = "".join(f"{unit}\n" for unit, split in contest.split.split_of.items() if split == PUBLIC)
            lines += ["", "[split]", 'public_list = "split/public.txt"']
        else:
            lines += ["", "[split]", f"public = {rule['public']!r}", f"seed = {rule['seed']!r}"]
    for phase in contest.phases:
        lines += [
            "",
            "[[phase]]",
            f"name = {_quoted(phase.name)}",
            f"start = {_quoted(utc_text(phase.start))}",
            f"end = {_quoted(utc_text(phase.end))}",
            'submissions = "files"',
        ]
    return Reference(tuple(files), "\n".join(lines) + "\n", public_list)


def local_command(contest: Contest) -> str:
    """The command that gives a participant, on their own machine, the score a platform gives: the contest's parameters included.

    A path parameter (ILSVRC's ``meta.mat``) is named by its file's name, which participants have from the kit.
    """
    challenge = get(contest.challenge)
    paths = {p.name for p in challenge.parameters if p.is_path}
    sets = [
        f"--set {key}={Path(value).name if key in paths and value.lower() != 'none' else value}"
        for key, value in sorted(contest.settings.items())
    ]
    return " ".join([f"podium evaluate {challenge.id} --truth TRUTH --submission YOUR_SUBMISSION", *sets])


def _files(source: Path, name: str) -> list[tuple[Path, str]]:
    """A file as ``name``, or every file under a folder as ``name/relative path``."""
    if source.is_file():
        return [(source, name)]
    return [(p, f"{name}/{p.relative_to(source).as_posix()}") for p in sorted(source.rglob("*")) if p.is_file()]


def _quoted(text: str) -> str:
    """A TOML basic string: JSON's escapes are TOML's, and DEL, which JSON leaves as it is, is escaped too."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def utc_text(moment: datetime) -> str:
    """In UTC with a Z: platforms that drop the offset (Codabench keeps the clock time) still read the right moment."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
