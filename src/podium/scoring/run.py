"""``podium run``: prepare a working directory, run the program, score what it wrote."""

from __future__ import annotations

import errno
import os
import shutil
import stat
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from podium.challenges import get, runnable
from podium.core.errors import UsageError
from podium.core.issues import Issue
from podium.core.parameters import resolve
from podium.core.provenance import signature
from podium.core.result import REJECTED, Result
from podium.formats.folders import list_folder
from podium.runner.disk import used_bytes
from podium.runner.docker import run_docker
from podium.runner.process import Limits, RunReport, run_limited
from podium.runner.sandbox import bubblewrap, choose, seen_images
from podium.runner.volume import BLOCK, mounted, unmount
from podium.runner.workdir import (
    INPUT_FILE,
    RUN_PREFIX,
    prepare_workdir,
    snapshot,
    temporary_folder,
    temporary_parent_beside,
)
from podium.scoring.engine import evaluate

COPY_LIMIT_BYTES = 256 * 2**20  # images copied for a sandbox where they cannot be linked, at most


@dataclass(frozen=True)
class RunRequest:
    """One run of a participant's program (a shell ``command`` or a Docker ``image``: exactly one) and its scoring.

    ``limits``: what the run may use; its ``time_s`` ``None`` is the challenge's
    budget for ``images``. ``sandbox``: ``auto`` (bubblewrap for a command,
    Docker for an image), ``bwrap``, ``docker`` or ``none``; ``visible``:
    folders the program may read in the sandbox (its code, its interpreter);
    ``gpus``: NVIDIA GPUs to give it (``all`` or ``device=0,1``); ``code``: the
    program's own folder (a submission), shown read-only at
    :data:`~podium.runner.sandbox.CODE_FOLDER` in bubblewrap, from a linked copy
    in the run's temporary folder so that no server path shows in the sandbox's
    mount table (the command names it there); the images are shown from such a
    linked copy too, in bubblewrap and Docker alike; ``cgroup``: a delegated cgroup v2
    folder for the run's group; ``workdir``: where the program's working
    folder is kept after the run (in a sandbox the program writes in a folder
    of the run's temporary folder, moved here once it ended, so that this
    path does not show in its mount table; with ``sandbox`` ``none`` it
    writes here). ``settings``, ``workers``,
    ``scheduler``, ``split_of`` and ``contest``: as :func:`podium.scoring.engine.evaluate`
    takes them, for scoring the program's output.
    """

    challenge_id: str
    images: Path
    truth: Path
    limits: Limits
    command: str | None = None
    image: str | None = None
    settings: Mapping[str, str] = field(default_factory=dict)
    sandbox: str = "auto"
    visible: tuple[Path, ...] = ()
    gpus: str | None = None
    code: Path | None = None
    cgroup: Path | None = None
    workdir: Path | None = None
    workers: int = 1
    scheduler: str | None = None
    split_of: Mapping[str, str] | None = None
    contest: Mapping[str, Any] | None = None


def run_program(request: RunRequest) -> Result:
    """Run a participant's program under the challenge's contract and score its output."""
    challenge_id, images, image, gpus = request.challenge_id, request.images, request.image, request.gpus
    if not sys.platform.startswith("linux"):
        raise UsageError(
            "podium run needs Linux: it confines and measures programs with bubblewrap, cgroups and /proc "
            "(evaluate, validate, rank and the Python API work on any system)"
        )
    challenge = get(challenge_id)
    contract = challenge.program
    if contract is None:
        raise UsageError(f"{challenge_id} has no program contract; podium run supports {', '.join(runnable())}")
    if (request.command is None) == (image is None):
        raise UsageError("give exactly one of --command and --image")
    if not images.is_dir():
        raise UsageError(f"--images {images} is not a folder")
    chosen = choose(request.sandbox, image is not None)
    if gpus and chosen == "none":
        raise UsageError(
            "--gpus needs a sandbox (bubblewrap or Docker); without one the program sees every device podium sees"
        )
    _keep_truth_hidden(request.truth, [("--images", images), *(("--visible", path) for path in request.visible)])
    params = resolve(challenge.parameters, request.settings)
    limits = (
        request.limits
        if request.limits.time_s is not None
        else replace(request.limits, time_s=contract.time_limit(images, params))
    )
    scratch = temporary_folder(RUN_PREFIX, temporary_parent_beside(images))  # where the images can be linked
    kept = request.workdir  # where the program's working folder is kept after the run, if asked
    work = kept if kept is not None and chosen == "none" else scratch / "work"  # a sandbox's mount names no kept path
    volume = None
    try:
        if work != kept and limits.disk_mb is not None:  # on a file system of its own where podium can make one
            volume = mounted(scratch / "disk", int(limits.disk_mb * 2**20))
            work = volume.folder if volume is not None else work
        prepare_workdir(work, seen_images(chosen, images))
        code = request.code
        if code is not None and chosen == "bwrap":
            code = linked_copy(code, scratch / "code")
        before = snapshot(images)
        read_through(images)
        shown = images if chosen == "none" else staged_images(images, scratch / "images")
        shell = ["/bin/sh", "-c", request.command or ""]
        image_id = None
        if image is not None:  # chosen is docker
            report, image_id = run_docker(image, work, shown, limits, gpus)
        elif chosen == "bwrap":
            with bubblewrap(shell, work, shown, request.visible, limits.memory_bytes, gpus, code) as confinement:
                report = run_limited(confinement, work, limits, request.cgroup)
        else:
            report = run_limited(shell, work, limits, request.cgroup)
        run = {
            **report.to_dict(),
            "time_limit_s": limits.time_s,
            "memory_limit_mb": limits.memory_mb,
            "disk_limit_mb": limits.disk_mb,
            "cpus": limits.cpus,
            "gpus": gpus,
        }
        if kept is not None:
            run["workdir"] = str(kept)
        if image_id is not None:
            run["image"] = image_id
        warnings = []
        if snapshot(images) != before:
            warnings.append(
                Issue("images_modified", "the program changed the images folder (it should only read it)", str(images))
            )
        replaced = _replaced(work)
        if replaced:
            return _rejected(request, params, warnings, Issue("workdir_replaced", replaced, str(work)), run)
        if kept is not None and work != kept:
            most = max(used_bytes(work), int((limits.disk_mb or 0) * 2**20))  # what it takes, or may take
            try:
                work = _moved_into(work, kept, most)
            except (OSError, _CopyTooLarge) as exc:  # the program's files, which may be anything
                why = (
                    f"its files come to more than {most:,} bytes to copy (the run's disk limit; a sparse file counts its size)"
                    if isinstance(exc, _CopyTooLarge)
                    else _told(exc)
                )
                error = Issue(
                    "workdir_not_kept", f"what the program wrote could not be kept in {kept}: {why}", str(kept)
                )
                return _rejected(request, params, warnings, error, run)
        if report.outcome == "disk_limit":  # nothing of it is read: it may be any amount of anything
            error = Issue("disk_limit", f"the program was stopped: {_why(report, limits)}", str(work))
            return _rejected(request, params, warnings, error, run)
        _remove_input_file(work)
        run.update(contract.details(work, images))
        if not contract.has_output(work):
            if report.outcome == "finished":
                run["outcome"] = "no_output"  # a limit or a crash stays the outcome: it is the cause
            error = Issue("no_output", f"the program wrote nothing to score ({_why(report, limits)})", str(work))
            return _rejected(request, params, warnings, error, run)
        scoring = {**request.settings, **contract.scoring_settings(report.wall_s, report.peak_memory_mb)}
        result = evaluate(
            challenge_id,
            request.truth,
            work,
            scoring,
            workers=request.workers,
            scheduler=request.scheduler,
            split_of=request.split_of,
            contest=request.contest,
        )
    finally:
        if volume is not None:
            unmount(volume)
        shutil.rmtree(scratch, ignore_errors=True)
    result.warnings = warnings + result.warnings
    result.run = run
    return result


def _rejected(
    request: RunRequest, params: dict[str, Any], warnings: list[Issue], error: Issue, run: dict[str, Any]
) -> Result:
    """A run that left nothing to score."""
    challenge_id = request.challenge_id
    result = Result(challenge_id, REJECTED, {}, {}, warnings, [error], params, run)
    result.signature = signature(
        challenge_id, get(challenge_id).parameters, params, request.truth, None, request.contest
    )
    return result


class _CopyTooLarge(Exception):
    """More bytes than a copy may write (a linked copy's ``copy_limit``, a kept working folder's disk limit) would have been copied."""


def linked_copy(folder: Path, target: Path, copy_limit: int | None = None) -> Path:
    """``folder`` again at ``target``: its files hard-linked where one file system holds both (and the kernel lets
    podium link them), else copied, at most ``copy_limit`` bytes in all (:class:`_CopyTooLarge` past it).

    A sandbox is shown the copy, in the run's temporary folder: a bind mount's
    entry in ``/proc/self/mountinfo`` names its source's path on its disk, which
    for the contest's folders tells the server's layout (data folder, contest
    and team names); the copy's path tells nothing but podium's temporary folder.
    """
    copied = 0

    def link(source: str, destination: str) -> None:
        nonlocal copied
        try:
            os.link(source, destination)
        except OSError:
            copied += os.stat(source).st_size
            if copy_limit is not None and copied > copy_limit:
                raise _CopyTooLarge from None
            shutil.copy2(source, destination)

    shutil.copytree(folder, target, symlinks=True, copy_function=link)
    return target


def staged_images(images: Path, target: Path) -> Path:
    """The images folder a sandbox is shown: a linked copy at ``target``; its own folder, whose path then shows in the
    mount table, where more than ``COPY_LIMIT_BYTES`` of them cannot be linked (no temporary folder on their file
    system), rather than copying a large test set on every run."""
    try:
        return linked_copy(images, target, COPY_LIMIT_BYTES)
    except _CopyTooLarge:
        shutil.rmtree(target, ignore_errors=True)
        return images


def _keep_truth_hidden(truth: Path, shown: list[tuple[str, Path]]) -> None:
    """Refuse to show the program a folder that holds the truth (or lies inside it)."""
    hidden = truth.resolve()
    for option, path in shown:
        seen = path.resolve()
        if seen == hidden or seen in hidden.parents or hidden in seen.parents:
            raise UsageError(
                f"{option} {path} would show the program the truth ({truth}); keep the truth outside the folders it sees"
            )


def read_through(images: Path) -> None:
    """Read every test image once, so that they are in the page cache before the program starts.

    The first run and the tenth then read them equally fast, and the kernel
    charges their cache to no run's memory (it charges a page to the group
    that first reads it).
    """
    for path in list_folder(images, refuse_hard_links=False).files:
        try:
            with open(path, "rb", buffering=0) as f:
                while f.read(1 << 20):
                    pass
        except OSError:
            continue  # unreadable: the program will find out too


def _replaced(work: Path) -> str | None:
    """What the program did to its working folder, if it is no longer a real folder (never followed)."""
    try:
        mode = os.lstat(work).st_mode
    except FileNotFoundError:
        return "the program deleted its working folder; nothing can be scored"
    if stat.S_ISLNK(mode):
        return "the program replaced its working folder by a symbolic link, which is never followed"
    if not stat.S_ISDIR(mode):
        return "the program replaced its working folder by something that is not a folder"
    return None


def _moved_into(work: Path, kept: Path, most: int) -> Path:
    """``kept``, holding what the program left in ``work``: a rename per entry where one file system holds both; an
    entry of the same name already in ``kept`` is replaced.

    Across file systems the entries are copied (:func:`_copied_across`), at most ``most`` bytes in all
    (:class:`_CopyTooLarge` past it).
    """
    kept.mkdir(parents=True, exist_ok=True)
    for entry in os.scandir(work):
        target = kept / entry.name
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        elif target.exists() or target.is_symlink():
            target.unlink()
        try:
            os.rename(entry.path, target)
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
            most -= _copied_across(Path(entry.path), target, most)
    return kept


def _copied_across(source: Path, target: Path, most: int) -> int:
    """Copy ``source`` (a program's file or folder) to ``target`` on another file system; the bytes copied.

    Folders, regular files and links (as links, never followed) are copied, one at a time from a stack (a program may
    nest folders deeper than Python's recursion goes); a pipe or a socket is left out (shutil's copy would stop on it:
    nothing is scored from one). Files are counted by their sizes, as a copy writes them whole: a program's sparse
    files take no disk where it wrote them, but their copy would, so more than ``most`` bytes is :class:`_CopyTooLarge`.
    """
    copied, stack = 0, [(source, target)]
    while stack:
        here, there = stack.pop()
        info = os.lstat(here)
        if stat.S_ISDIR(info.st_mode):
            there.mkdir()
            stack += [(Path(entry.path), there / entry.name) for entry in os.scandir(here)]
        elif stat.S_ISLNK(info.st_mode):
            os.symlink(os.readlink(here), there)
        elif stat.S_ISREG(info.st_mode):
            copied += info.st_size
            if copied > most:
                raise _CopyTooLarge
            shutil.copyfile(here, there, follow_symlinks=False)
    return copied


def _told(exc: OSError) -> str:
    """What went wrong, in words, with the file it went wrong on."""
    return f"{exc.strerror or exc} ({exc.filename})" if exc.filename else str(exc.strerror or exc)


def _remove_input_file(work: Path) -> None:
    """``input.txt`` is podium's, not output: removed whatever the program turned it into."""
    path = work / INPUT_FILE
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _why(report: RunReport, limits: Limits) -> str:
    """How the program ended, in words."""
    if report.outcome == "disk_limit":
        if report.peak_disk_mb is not None and report.peak_disk_mb <= (limits.disk_mb or 0):  # files, not bytes
            return (
                f"its working folder reached the disk limit of {limits.disk_mb:g} MB in files: "
                f"at most one file per {BLOCK // 1024} KiB of it (an empty file counts)"
            )
        return f"its working folder reached the disk limit of {limits.disk_mb:g} MB (files it writes count, in all)"
    if report.outcome == "timeout":
        return f"it was stopped at the time limit of {limits.time_s:g} s"
    if report.outcome == "memory_limit":
        return f"it was stopped at the memory limit of {limits.memory_mb:g} MB"
    if report.outcome == "crashed":
        return f"it ended with exit code {report.exit_code}"
    return "it finished without writing any output"
