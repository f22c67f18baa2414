"""A contest's starting kit: a zip of sample items with their truth, a baseline submission, a contest file and a README.

The kit's contest file is written from the contest's own (the same challenge,
parameters and ranking rule; the sample as its truth, no split), and its
README's command scores the baseline with it, so the kit's score is the one
``podium serve`` gives the same submission on the same items: both read the
same contest file through the same scorer. The zip is the same bytes for the
same inputs (names sorted, times fixed), so its SHA-256 names it.

::

    glas-demo-kit/
        README.md          the command, and what the kit holds
        contest.toml       the sample's contest: podium evaluate --contest contest.toml
        truth/...          the sample items' truth (none of them in the test set)
        baseline/...       the baseline submission
        parameters/...     files the challenge's parameters name, if any
"""

from __future__ import annotations

import os
import shutil
import tempfile
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

from podium.challenges import get
from podium.contest import Contest, ContestError
from podium.contest.content import KitPlan
from podium.core.errors import PodiumError
from podium.core.labels import SCORED

if TYPE_CHECKING:
    from podium.core.result import Result

FIXED_TIME = (1980, 1, 1, 0, 0, 0)  # the zip's earliest time: the same bytes on every build


def kit_name(contest: Contest) -> str:
    """The kit's folder (and file) name: ``ID-kit``, or ``ID-TRACK-kit`` in a contest of several tracks."""
    return f"{contest.id}-{contest.track}-kit" if contest.track else f"{contest.id}-kit"


def command(contest: Contest) -> str:
    """The command that scores the kit's baseline, run in the kit's folder."""
    plan = _plan(contest)
    return f"podium evaluate --contest contest.toml --submission {_inside('baseline', plan.submission)}"


def _plan(contest: Contest) -> KitPlan:
    if contest.kit is None:
        where = f"track {contest.track}" if contest.track else f"contest {contest.id}"
        raise ContestError(f"{where} has no starting kit: set [kit] truth and submission in its contest file")
    return contest.kit


def _inside(folder: str, source: Path) -> str:
    """Where ``source`` goes in the kit: a folder's content under ``folder/``, a file as ``folder/NAME``."""
    return f"{folder}/" if source.is_dir() else f"{folder}/{source.name}"


def members(contest: Contest) -> list[tuple[str, Path | bytes]]:
    """Each file of the kit: its name in the zip and its source (a file, or the bytes written)."""
    plan = _plan(contest)
    name = kit_name(contest)
    files: list[tuple[str, Path | bytes]] = []
    for folder, source in (("truth", plan.truth), ("baseline", plan.submission)):
        files += [(f"{name}/{folder}/{relative}", path) for relative, path in _walk(source)]
    settings: dict[str, str] = {}
    for parameter in get(contest.challenge).parameters:
        text = contest.settings.get(parameter.name)
        if text is None:
            continue
        if parameter.is_path and text.lower() != "none":
            path = Path(text)
            files.append((f"{name}/parameters/{path.name}", path))
            text = f"parameters/{path.name}"
        settings[parameter.name] = text
    toml = contest_file(contest, _inside("truth", plan.truth).rstrip("/"), settings)
    files += [(f"{name}/contest.toml", toml.encode()), (f"{name}/README.md", readme(contest, len(plan.units)).encode())]
    return sorted(files, key=lambda member: member[0])


def _walk(source: Path) -> list[tuple[str, Path]]:
    """``source``'s files by their path under it (a file: its own name); a symbolic link is refused."""
    if source.is_file() and not source.is_symlink():
        return [(source.name, source)]
    found = []
    for folder, folders, names in os.walk(source):
        folders.sort()
        for file in sorted(names):
            path = Path(folder) / file
            if path.is_symlink() or not path.is_file():
                raise PodiumError(f"{path}: a kit holds regular files only (a symbolic link or a device is refused)")
            found.append((path.relative_to(source).as_posix(), path))
    return found


def _string(text: str) -> str:
    """``text`` as a TOML basic string."""
    escaped = "".join(
        c if c.isprintable() and c not in '"\\' else f"\\u{ord(c):04x}" if ord(c) < 0x10000 else f"\\U{ord(c):08x}"
        for c in text
    )
    return f'"{escaped}"'


def contest_file(contest: Contest, truth: str, settings: dict[str, str]) -> str:
    """The kit's contest file: the contest's challenge, parameters, phases and ranking rule over the sample."""
    kit_id = kit_name(contest)[:64]
    lines = [
        f"# The starting kit of {contest.id}{' (track ' + contest.track + ')' if contest.track else ''}: its sample items,",
        "# scored as the contest scores them. Score the baseline: podium evaluate --contest contest.toml --submission baseline/",
        f"id = {_string(kit_id)}",
        f"title = {_string((contest.track_title or contest.title) + ' (starting kit)')}",
        f"challenge = {_string(contest.challenge)}",
        f"truth = {_string(truth)}",
        f"timezone = {_string(contest.timezone.key)}",
        "",
    ]
    if settings:
        lines += ["[parameters]", *(f"{key} = {_string(value)}" for key, value in settings.items()), ""]
    for phase in contest.phases:
        lines += [
            "[[phase]]",
            f"name = {_string(phase.name)}",
            f"start = {phase.start.isoformat()}",
            f"end = {phase.end.isoformat()}",
            'submissions = "files"',
            "",
        ]
    ranking = contest.ranking
    lines += ["[ranking]"]
    lines += [] if ranking.by is None else [f"by = {_string(ranking.by)}"]
    lines += [] if ranking.decimals is None else [f"decimals = {ranking.decimals}"]
    return "\n".join(lines) + "\n"


def readme(contest: Contest, items: int) -> str:
    """The kit's README: what it holds and the command that scores the baseline."""
    challenge = get(contest.challenge)
    return f"""# {contest.track_title or contest.title}: starting kit

This kit holds {items} public sample item{"s" * (items != 1)} with their truth (`truth/`), none of them in
the test set, a baseline submission (`baseline/`), and `contest.toml`: the contest's own
challenge (`{contest.challenge}`, {challenge.title}), parameters and ranking rule over the sample.

Score the baseline, or your own submission, on your machine (with podium installed), in this folder:

    {command(contest)}

The score is the one the contest's server gives the same submission on the same items: both
read this contest file through the same scorer. Replace `baseline/` with your own submission;
`podium validate --contest contest.toml --submission YOURS` checks its format without scoring.
"""


def tried(kit: Path, contest: Contest) -> Result:
    """The kit's command run on the zip ``kit``, unpacked in a temporary folder: its result; :class:`ContestError` if it does not score.

    A kit whose contest file cannot score its sample (a part of the contest's
    ``parts`` with no sample item, a sample the challenge cannot read) or whose
    baseline is rejected is refused here, before a participant finds it.
    """
    from podium.contest import load
    from podium.scoring.engine import evaluate

    with tempfile.TemporaryDirectory(prefix="podium-kit-") as folder:
        with zipfile.ZipFile(kit) as archive:
            archive.extractall(folder)
        root = Path(folder) / kit_name(contest)
        try:
            sample = load(root / "contest.toml")
            result = evaluate(
                sample.challenge, sample.truth, root / "baseline", sample.settings, contest=sample.stamp()
            )
        except PodiumError as exc:
            raise ContestError(f"the kit does not score: {exc}", exc.issues) from None
    if result.status != SCORED:
        problems = "; ".join(issue.message for issue in result.errors[:3])
        raise ContestError(f"the kit's baseline is {result.status} on its sample: {problems}")
    return result


def build_kit(contest: Contest, out: Path) -> int:
    """Write the kit of ``contest`` (a track: :meth:`Contest.on`) to the zip ``out``, atomically; its size in bytes."""
    files = members(contest)
    out.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=out.parent, prefix=".kit-", suffix=".zip")
    try:
        with os.fdopen(handle, "wb") as raw, zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as archive:
            for name, source in files:
                info = zipfile.ZipInfo(name, FIXED_TIME)
                info.external_attr, info.compress_type = 0o644 << 16, zipfile.ZIP_DEFLATED
                if isinstance(source, bytes):
                    archive.writestr(info, source)
                else:
                    with source.open("rb") as read, archive.open(info, "w") as write:
                        shutil.copyfileobj(read, write, 1 << 20)
        os.replace(temporary, out)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return out.stat().st_size
