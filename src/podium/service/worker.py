"""A worker: claims jobs from the queue, scores them, keeps the results; any number on any machine.

``podium worker --database URL --data DIR`` runs one; ``podium serve
--workers N`` starts N beside the web service. A worker reloads the contest
file when the scoring round changes (``podium rescore``). A heartbeat thread
renews the lease while a job is scored; if the lease is lost, the result is
dropped (another worker has the job).

Scoring files is batch work: with ``nice`` (``podium serve``'s workers: 10), a
worker scores files in a thread of lower CPU priority, so that a web process on
the same cores takes a burst of uploads at once while the queue drains behind
it. A program's run keeps the worker's priority: its time limit is wall time,
which another process's load must not eat.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from sqlalchemy import Engine, select

from podium.core.errors import PodiumError
from podium.runner import docker
from podium.service import heartbeats, queue, state
from podium.service.database import reading
from podium.service.intake import submission_folder
from podium.service.scoring import Runtime, score
from podium.service.statuses import Clock, utc_now
from podium.service.tables import submissions, teams

log = logging.getLogger("podium.worker")
POLL_S = 0.5


def lower_priority(nice: int) -> None:
    """Run the calling thread (and the processes it starts) at the CPU priority ``nice`` (0 to 19: the higher, the later
    it gets a core another task wants), never higher than it runs already (which only root may ask): Linux keeps a
    niceness per thread."""
    thread = threading.get_native_id()
    if nice > os.getpriority(os.PRIO_PROCESS, thread):
        os.setpriority(os.PRIO_PROCESS, thread, nice)


class Worker:
    def __init__(
        self,
        engine: Engine,
        data: Path,
        runtime: Runtime = Runtime(),
        clock: Clock = utc_now,
        lease_s: float = queue.LEASE_S,
        nice: int = 0,
    ) -> None:
        """``nice``: the CPU priority of the scoring of files (:meth:`work_once`)."""
        self.engine = engine
        self.data = data
        self.runtime = runtime
        self.clock = clock
        self.lease_s = lease_s
        self.name = f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}"
        self.contest = state.ContestCache(engine)
        self.batch = ThreadPoolExecutor(1, "scoring", lower_priority, (nice,)) if nice else None
        if self.batch is not None:
            self.batch.submit(log.info, "files scored at niceness %s", nice).result()  # its thread started

    def run(self, stop: threading.Event) -> None:
        """Work until ``stop`` is set, writing a heartbeat all along (:mod:`podium.service.heartbeats`); first remove the containers that dead workers of this host left."""
        if shutil.which("docker") is not None:
            try:
                docker.reap_leftovers()
            except PodiumError:
                pass  # no engine answers: images cannot run here, and none was left
        alive = heartbeats.Heartbeat(self.engine, self.name, self.clock)
        alive.start()
        try:
            while not stop.is_set():
                if not self.work_once():
                    stop.wait(POLL_S)
        finally:
            alive.stop()

    def work_once(self) -> bool:
        """Score one job; ``False`` when the queue is empty."""
        claim = queue.claim(self.engine, self.name, self.clock(), self.lease_s)
        if claim is None:
            return False
        about = {
            "job_id": claim.job_id,
            "submission_id": claim.submission_id,
            "round": claim.round,
            "worker": self.name,
        }
        log.info(
            "scoring submission %s (job %s, attempt %s)", claim.submission_id, claim.job_id, claim.attempt, extra=about
        )
        beat = _Heartbeat(self, claim)
        beat.start()
        failure: str | None = None
        try:
            with reading(self.engine) as connection:
                row = connection.execute(
                    select(submissions, teams.c.contest).join(teams).where(submissions.c.id == claim.submission_id)
                ).one()
            target = submission_folder(self.data, row.id) / row.target
            # scored by its team's contest, as its track's (and its phase's) challenge, truth, parameters and split score it
            served = self.contest.get(row.contest)
            contest = served.on(row.track, row.phase if served.phased() else None)
            if (
                row.kind == "files" and self.batch is not None
            ):  # a program's run keeps its priority: its time is wall time
                outcome = self.batch.submit(score, contest, row.kind, target, row.entry, self.runtime).result()
            else:
                with docker.labelled(contest=contest.id, submission=str(row.id)):
                    outcome = score(contest, row.kind, target, row.entry, self.runtime)
        except PodiumError as exc:  # the organizer's (truth, contest) or the machine's: never the team's
            failure = f"{type(exc).__name__}: {exc}"
        except Exception as exc:  # a bug in podium
            log.exception("internal error while scoring submission %s", claim.submission_id, extra=about)
            failure = f"internal error {type(exc).__name__}: {str(exc)[:300]}"
        finally:
            beat.stop()
        if failure is None:
            queue.finish(self.engine, claim, outcome, self.clock())
            log.info("submission %s %s", claim.submission_id, outcome.status, extra=about)
        else:
            queue.retry(self.engine, claim, failure, self.clock())
            log.warning("submission %s: %s", claim.submission_id, failure, extra=about)
        return True


class _Heartbeat(threading.Thread):
    """Renews a claim's lease every third of the lease until stopped."""

    def __init__(self, worker: Worker, claim: queue.Claim) -> None:
        super().__init__(daemon=True)
        self.worker = worker
        self.claim = claim
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(self.worker.lease_s / 3):
            try:
                if not queue.heartbeat(self.worker.engine, self.claim, self.worker.clock(), self.worker.lease_s):
                    return
            except Exception:  # a database hiccup: try again at the next beat
                continue

    def stop(self) -> None:
        self.stopped.set()
        self.join()
