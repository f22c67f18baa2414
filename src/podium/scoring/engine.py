"""Evaluating a submission: prepare, score every item (in parallel), merge, finalize.

The engine knows nothing of terminals: progress goes to an optional callback,
so the CLI, a web service or a distributed runner can drive it alike. Items
run inline, in local processes, or on a Dask cluster (:mod:`podium.scoring.distributed`);
item statistics are exact and merged in item order, so the result is the same
for any number of workers and any cluster.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import reduce
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from podium.accel.allocator import keep_large_blocks
from podium.accel.jit import loaded_signatures
from podium.challenges import get
from podium.challenges.base import Challenge, ItemResult, Job, Need
from podium.core.errors import ContractError, TruthError, UsageError
from podium.core.issues import Issue, IssueLog
from podium.core.parameters import resolve
from podium.core.provenance import signature
from podium.core.result import REJECTED, SCORED, Result, Split, Status, UnitTable
from podium.formats.archives import Opened, opened
from podium.formats.files import recording_reads

if TYPE_CHECKING:
    from multiprocessing.context import BaseContext

Progress = Callable[[int, int], None]  # (items done, items in all)


def evaluate(
    challenge_id: str,
    truth: Path,
    submission: Path,
    settings: Mapping[str, str] | None = None,
    *,
    workers: int = 1,
    scheduler: str | None = None,
    progress: Progress | None = None,
    checks_only: bool = False,
    scores_only: bool = False,
    split_of: Mapping[str, str] | None = None,
    contest: Mapping[str, Any] | None = None,
) -> Result:
    """Score ``submission`` against ``truth``; with ``checks_only``, validate it only; with
    ``scores_only``, leave out what only the result document shows (its unit table, each item's
    per-unit details: :meth:`~podium.challenges.base.Challenge.score_item`), as a command printing
    the scores does.

    Items are scored inline, by ``workers`` local processes, or, given the
    address of a Dask ``scheduler``, on that cluster (:mod:`podium.scoring.distributed`);
    the result is the same in all three ways.

    ``submission`` is a file, a folder, or a zip or tar.gz of either, unpacked
    safely (:func:`podium.formats.archives.opened`); problems then name ``ARCHIVE/member``.

    ``split_of`` names the split of every unit of the test set (a contest's
    public and private parts): each split is then scored from the statistics
    of its own parts, and the whole from all of them (``Result.splits``).
    ``contest`` (its id and split) goes into the result's signature.
    Raises :class:`~podium.core.errors.UsageError` or :class:`~podium.core.errors.TruthError`
    for the organizer's mistakes; a bad submission gives a ``rejected`` result.
    """
    challenge = get(challenge_id)
    params = resolve(challenge.parameters, settings or {})
    if submission.is_symlink():  # never read through: it could point anywhere
        link = Issue("not_a_file", "is a symbolic link; links are not followed", str(submission))
        result = Result(challenge.id, REJECTED, {}, {}, [], [link], params)
        result.signature = signature(challenge.id, challenge.parameters, params, truth, None, contest)
        return result
    if not submission.exists():
        raise UsageError(f"submission {submission} does not exist")
    with opened(submission) as scored:
        read: dict[str, str] | None = None
        if scored.problem is not None:
            result = Result(
                challenge.id, REJECTED, {}, {}, [], [Issue("archive", scored.problem, str(submission))], params
            )
        else:
            result, read = _evaluate(
                challenge,
                params,
                truth,
                scored.path,
                _Spread(workers, scheduler, progress),
                "checks" if checks_only else "scores" if scores_only else "all",
                split_of,
            )
            _name_members(result, scored, submission)
        result.signature = signature(challenge.id, challenge.parameters, params, truth, read, contest)
    return result


def _name_members(result: Result, scored: Opened, archive: Path) -> None:
    """Every problem's file inside an unpacked archive named ``ARCHIVE/member``."""
    if scored.root is None:
        return

    def rename(issues: list[Issue]) -> list[Issue]:
        return [replace(i, file=scored.member(i.file, archive)) if i.file else i for i in issues]

    result.errors, result.warnings, result.score_warnings = (
        rename(result.errors),
        rename(result.warnings),
        rename(result.score_warnings),
    )
    for split in (result.splits or {}).values():
        split.warnings = rename(split.warnings)


def _evaluate(
    challenge: Challenge,
    params: dict[str, Any],
    truth: Path,
    submission: Path,
    spread: _Spread,
    need: Need,
    split_of: Mapping[str, str] | None,
) -> tuple[Result, dict[str, str]]:
    """The result, and the submission's files the challenge read (path -> SHA-256, for its fingerprint)."""
    log = IssueLog()
    with recording_reads(submission) as read:
        job = challenge.prepare(truth, submission, params, log)
    _check_job(challenge, job, log)
    checks_only = need == "checks"
    skipped = checks_only and challenge.checked_by_prepare  # nothing left to check, only to compute
    parts = (
        []
        if skipped
        else [
            (i, *part) for i, item in enumerate(job.items) for part in _divide(challenge, job.context, item, split_of)
        ]
    )
    results: list[ItemResult[Any]] = []
    if parts:  # a rejected plan needs no workers
        with _pool(challenge, job.context, spread, (truth, submission), len(parts), need) as pool:
            results = list(pool.map([part for _, _, part in parts], spread.progress))
    for result in results:
        read.update(result.read)
    columns = challenge.unit_columns(job.context)
    truth_log = IssueLog()
    for (i, _, _), result in zip(parts, results):
        _check_result(challenge, job.items[i].key, result, truth, len(columns))
        truth_log.add_errors(result.truth_errors)
        log.add_errors(result.errors)
        log.add_warnings(result.warnings)
    if truth_log.error_count:
        raise TruthError("the truth is not usable", truth_log.errors)
    if log.error_count or checks_only:
        status: Status = REJECTED if log.error_count else SCORED
        return Result(challenge.id, status, {}, {}, log.warnings, log.errors, params), read

    details = _joined_details(challenge, job, list(zip(parts, results)))
    scores, summary, score_warnings = _finalize(challenge, job.context, [r.stats for r in results], details)
    splits = None
    if split_of is not None:
        splits = {}
        for split, count in sorted(Counter(split_of.values()).items()):
            chosen = [(part, result) for part, result in zip(parts, results) if part[1] == split]
            stats = [r.stats for _, r in chosen]
            splits[split] = Split(
                count, *_finalize(challenge, job.context, stats, _joined_details(challenge, job, chosen))
            )
    units = UnitTable(columns, _merged_units(results), split_of) if columns and need == "all" else None
    scored = Result(
        challenge.id,
        SCORED,
        scores,
        summary,
        log.warnings,
        log.errors,
        params,
        score_warnings=score_warnings,
        splits=splits,
        units=units,
    )
    return scored, read


def _merged_units(results: list[ItemResult[Any]]) -> dict[str, tuple[float, ...]]:
    """Every item's unit rows in one table, in item order."""
    merged: dict[str, tuple[float, ...]] = {}
    for result in results:
        merged.update(result.units)
    return merged


def _joined_details(
    challenge: Challenge, job: Job[Any, Any], scored: list[tuple[tuple[int, str | None, Any], ItemResult[Any]]]
) -> dict[str, Any]:
    """Each item's details by its key, those of its parts joined (:meth:`Challenge.join_details`)."""
    details_of: dict[int, list[dict[str, Any]]] = {}
    for (i, _, _), result in scored:
        details_of.setdefault(i, []).append(result.details)
    return {job.items[i].key: challenge.join_details(d) if len(d) > 1 else d[0] for i, d in details_of.items()}


def _check_job(challenge: Challenge[Any, Any, Any], job: Job[Any, Any], log: IssueLog) -> None:
    """The contract's rules on a plan: string keys, unique; no items only with an error logged."""
    keys = [getattr(item, "key", None) for item in job.items]
    if not all(isinstance(key, str) for key in keys):
        raise ContractError(
            f"{challenge.id}: every item must have a str key (got {next(k for k in keys if not isinstance(k, str))!r})"
        )
    if len(set(keys)) != len(keys):
        raise ContractError(
            f"{challenge.id}: item keys must be unique ({Counter(keys).most_common(1)[0][0]!r} is repeated)"
        )
    if not job.items and not log.error_count:
        raise ContractError(
            f"{challenge.id}: prepare planned no item and logged no error; an empty submission must be rejected with a reason"
        )


def _check_result(
    challenge: Challenge[Any, Any, Any], key: str, result: ItemResult[Any], truth: Path, n_columns: int
) -> None:
    """The contract's rules on an item's result: truth problems apart, full unit rows (JSON details: :mod:`podium.core.result`)."""
    inside = (str(truth), str(truth) + os.sep)
    for issue in result.errors:
        if issue.file and (issue.file == inside[0] or issue.file.startswith(inside[1])):
            raise ContractError(
                f"{challenge.id}: item {key!r} reports a problem of the truth ({issue.file}) as the submission's; it belongs in truth_errors"
            )
    if set(map(len, result.units.values())) - {n_columns}:
        raise ContractError(
            f"{challenge.id}: item {key!r} has a unit row without one value per unit column ({n_columns})"
        )


def _divide(
    challenge: Challenge, context: Any, item: Any, split_of: Mapping[str, str] | None
) -> list[tuple[str | None, Any]]:
    """The item whole, or its parts with their splits."""
    if split_of is None:
        return [(None, item)]
    return list(challenge.divide(context, item, split_of))


def _finalize(
    challenge: Challenge, context: Any, stats: list[Any], details: dict[str, Any]
) -> tuple[dict[str, float | int | None], dict[str, Any], list[Issue]]:
    """Merge ``stats`` in order and finalize them: scores, details and the warnings about them."""
    log = IssueLog()
    scores, summary = challenge.finalize(context, reduce(lambda a, b: a.merge(b), stats), details, log)
    return scores, summary, log.warnings


@dataclass(frozen=True)
class _Spread:
    """Where items are scored: inline, ``workers`` local processes, or a Dask cluster at ``scheduler``."""

    workers: int
    scheduler: str | None
    progress: Progress | None


class _Pool(Protocol):
    def map(self, items: list[Any], progress: Progress | None) -> Iterator[ItemResult[Any]]: ...


@contextmanager
def _pool(
    challenge: Challenge, context: Any, spread: _Spread, paths: tuple[Path, ...], items: int, need: Need = "all"
) -> Iterator[_Pool]:
    """The local processes or the cluster that score ``items`` items (as ``need`` says; their checks alone: local processes only).

    A job of one item (the table challenges' whole file) is scored in this
    process even with a scheduler: a cluster has nothing to spread, and
    sending the item costs more than it could save (50,000 ILSVRC images:
    0.59 s here, 0.99 s as one Dask task, ``benchmarks/README.md``).
    """
    if spread.scheduler is not None and items > 1 and need != "checks":
        from podium.scoring.distributed import Cluster  # Dask is imported only when asked for

        with Cluster(spread.scheduler, challenge.id, context, paths) as cluster:
            yield cluster
    else:
        yield _Processes(challenge, context, max(spread.workers, 1), str(paths[1]), need)


@dataclass
class _Processes:
    """Items scored (or checked, as ``need`` says) inline (one worker) or by a pool of local processes."""

    challenge: Challenge
    context: Any
    workers: int
    submission: str
    need: Need = "all"

    def map(self, items: list[Any], progress: Progress | None) -> Iterator[ItemResult[Any]]:
        """Every item's result, in order: the first ones scored here, the rest by a pool if it pays (:func:`_pool_pays`).

        The items scored here load the challenge's kernels in this process, so that forked
        workers start with them; the last of them (the first that loaded no kernel version) measures
        what an item costs. Their progress is reported once the pool has started, since a
        progress bar's thread would keep the pool from forking.
        """
        total = len(items)
        done = 0
        item_cpu = 0.0
        measured = self.workers <= 1 or total <= 1
        while done < total and not measured:
            loaded, start = loaded_signatures(), time.process_time()
            result = self.challenge.evaluate_reading(self.context, items[done], self.submission, self.need)
            item_cpu, measured = time.process_time() - start, loaded_signatures() == loaded
            done += 1
            yield result
        rest = items[done:]
        with contextlib.ExitStack() as stack:
            if len(rest) > 1 and self.workers > 1 and _pool_pays(item_cpu * len(rest), min(self.workers, len(rest))):
                results = self._pooled(stack, rest)
            else:
                results = (
                    self.challenge.evaluate_reading(self.context, item, self.submission, self.need) for item in rest
                )
            if progress and done:
                progress(done, total)
            for result in results:
                yield result
                done += 1
                if progress:
                    progress(done, total)

    def _pooled(self, stack: contextlib.ExitStack, items: list[Any]) -> Iterator[ItemResult[Any]]:
        """The results of a pool started now and closed with ``stack`` (multiprocessing is imported
        here: a job scored in this process does not load it, 0.02 s of CPU)."""
        from concurrent.futures import ProcessPoolExecutor

        global _forkserver_started
        context = _process_context([type(self.challenge).__module__, *self.challenge.preload])
        pool = stack.enter_context(
            ProcessPoolExecutor(
                max_workers=min(self.workers, len(items)),
                mp_context=context,
                initializer=_init_worker,
                initargs=(self.challenge.id, self.context, self.submission, self.need),
            )
        )
        _forkserver_started = _forkserver_started or context.get_start_method() == "forkserver"
        # One item at a time keeps every core busy to the end; results come back in order.
        return pool.map(_evaluate_in_worker, items)


# What starting a pool of local workers costs, in seconds (benchmarks/first_run.py; 2 workers on 2 busy cores):
# forking this process (its kernels included) and sending each worker the job, 0.10 s; a forkserver's
# first start, which imports podium and the challenge's kernels in a new interpreter, 1 s of CPU
# (4.3 s of wall time on that busy machine); spawn, every worker such an interpreter.
POOL_START_S = 0.1
SERVER_START_S = 1.0
_forkserver_started = False


def _pool_pays(rest_cpu: float, workers: int) -> bool:
    """Whether ``workers`` processes finish ``rest_cpu`` CPU seconds of items sooner than this process alone.

    They save ``rest_cpu * (1 - 1/workers)`` of wall time and cost the pool's start: a GlaS set of a
    few images (5 ms each) is scored here, as with one worker, instead of waiting for two processes.
    """
    method = _start_method()
    start = POOL_START_S
    if method == "spawn" or (method == "forkserver" and not _forkserver_started):
        start += SERVER_START_S * (workers if method == "spawn" else 1)
    return rest_cpu * (1 - 1 / workers) > start


def _process_context(modules: list[str]) -> BaseContext:
    """How worker processes start (:func:`_start_method`); a forkserver imports the engine and ``modules``
    (the challenge's own and its :attr:`~podium.challenges.base.Challenge.preload`) once, before forking
    workers: for GlaS, Numba and the loaded kernels, 0.5 s that each worker would pay. The server starts
    with the first pool of the process; a later pool of another challenge imports its modules in each worker.
    """
    import multiprocessing

    method = _start_method()
    context = multiprocessing.get_context(method)
    if method == "forkserver":
        context.set_forkserver_preload(["podium.scoring.engine", *modules])
    return context


def _start_method() -> str:
    """``fork`` on Linux while this process runs a single thread: workers start at once with everything
    imported (the kernels the items scored here loaded too). Otherwise (a progress bar or a server's
    threads could hold locks that a forked child would inherit) ``forkserver``; ``spawn`` where neither exists.
    """
    if sys.platform.startswith("linux") and threading.active_count() == 1:
        return "fork"
    import multiprocessing

    return "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"


_worker_state: dict[str, Any] = {}


def _init_worker(challenge_id: str, context: Any, submission: str, need: Need) -> None:
    keep_large_blocks()
    _worker_state["challenge"] = get(challenge_id)
    _worker_state["context"] = context
    _worker_state["submission"] = submission
    _worker_state["need"] = need


def _evaluate_in_worker(item: Any) -> ItemResult[Any]:
    state = _worker_state
    return state["challenge"].evaluate_reading(state["context"], item, state["submission"], state["need"])


def default_workers() -> int:
    """All the cores this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
