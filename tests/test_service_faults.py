"""The queue under faults and load: a worker killed with SIGKILL mid-job, a lost lease, 100 uploads at once.

On SQLite and on a real PostgreSQL server. Workers here are real ``podium
worker`` processes where a process must die; loops are bounded.
"""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import tarfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select

from dask_cluster import Cluster
from podium.challenges import get
from podium.contest import load
from podium.service import queue
from podium.service.accounts import Caller
from podium.service.bodies import UploadSlots
from podium.service.database import reading
from podium.service.intake import Upload, submission_folder, take
from podium.service.scoring import Runtime, score
from podium.service.statuses import JOB_DONE, JOB_RUNNING
from podium.service.tables import jobs, results, submissions
from podium.service.worker import Worker
from podium.synthetic.glas import write_set
from service_helpers import Clock, LiveServer, at, demo_archive, set_up, write_contest

FACES = """images = "{images}"
[parameters]
th1_s = 600
th2_s = 1200
ram_max_mb = 4096
[limits]
memory_mb = 2048
"""
SLOW_PROGRAM = 'sleep {sleep}\nexec python3 "$(dirname "$0")/participant.py"\n'
PARTICIPANT = Path(__file__).resolve().parents[1] / "examples" / "contests" / "face-clustering" / "participant.py"


def program_archive(folder: Path, sleep: float) -> Path:
    folder.mkdir(parents=True)
    path = folder / "program.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for name, data in (
            ("run.sh", SLOW_PROGRAM.format(sleep=sleep).encode()),
            ("participant.py", PARTICIPANT.read_bytes()),
        ):
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    return path


def wait_for(condition, seconds: float, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out after {seconds} s waiting for {what}")


def one(engine: Engine, query) -> object:  # type: ignore[no-untyped-def]
    with reading(engine) as connection:
        return connection.execute(query).scalar_one()


def start_worker(url: str, data: Path, *options: str) -> subprocess.Popen[bytes]:
    command = [
        sys.executable,
        "-m",
        "podium",
        "worker",
        "--database",
        url,
        "--data",
        str(data),
        "--sandbox",
        "none",
        "--lease",
        "2",
        *options,
    ]
    return subprocess.Popen(command, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def test_a_worker_killed_mid_job_the_job_completes_once(database_url: str, tmp_path: Path) -> None:
    contest = write_contest(
        tmp_path / "contest",
        "face-clustering",
        kind="programs",
        extra=FACES.format(images=tmp_path / "contest" / "demo" / "images"),
    )
    clock = Clock(at("2026-03-02T12:00:00Z"))
    service, _ = set_up(database_url, contest, tmp_path / "data", ("alpha",), clock)
    archive = program_archive(tmp_path / "upload", sleep=4)

    taken = take(
        service.engine,
        load(contest),
        service.data,
        Caller(1, "alpha", False),
        Upload(archive, "program.tar.gz", archive.stat().st_size, "0" * 64, None),
        clock(),
        False,
    )
    assert taken["status"] == "queued", taken
    status = select(submissions.c.status).where(submissions.c.id == taken["id"])
    first = start_worker(database_url, service.data)
    try:
        wait_for(lambda: one(service.engine, status) == "running", 30, "the first worker to take the job")
        time.sleep(1.0)  # inside the program's sleep
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(timeout=10)
        assert one(service.engine, status) == "running"  # nobody told the database
        second = start_worker(database_url, service.data)
        try:
            wait_for(
                lambda: one(service.engine, status) not in ("queued", "running"),
                60,
                "the job to be taken again and finished",
            )
        finally:
            second.send_signal(signal.SIGTERM)
            assert second.wait(timeout=30) == 0, second.stderr.read().decode()[-2000:] if second.stderr else ""
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
    assert one(service.engine, status) == "scored"
    assert (
        one(service.engine, select(func.count()).select_from(results).where(results.c.submission_id == taken["id"]))
        == 1
    )
    assert one(service.engine, select(jobs.c.attempts).where(jobs.c.submission_id == taken["id"])) == 2
    assert one(service.engine, select(jobs.c.state).where(jobs.c.submission_id == taken["id"])) == "done"


def test_a_lost_lease_writes_nothing_and_the_job_is_not_counted_twice(database_url: str, tmp_path: Path) -> None:
    contest = write_contest(tmp_path / "contest")
    clock = Clock(at("2026-03-02T12:00:00Z"))
    service, _token = set_up(database_url, contest, tmp_path / "data", ("alpha",), clock)
    from podium.service.scoring import Runtime, score

    upload = demo_archive(contest, tmp_path / "upload")
    taken = take(
        service.engine,
        load(contest),
        service.data,
        Caller(1, "alpha", False),
        Upload(upload, "demo.tar.gz", 1, "0" * 64, None),
        clock(),
        False,
    )
    slow = queue.claim(service.engine, "slow", clock(), lease_s=5)
    assert slow is not None and queue.claim(service.engine, "other", clock(), lease_s=5) is None  # held
    later = clock() + timedelta(seconds=6)
    fast = queue.claim(service.engine, "fast", later, lease_s=5)
    assert fast is not None and fast.job_id == slow.job_id and fast.attempt == 2
    assert not queue.heartbeat(service.engine, slow, later)
    target = submission_folder(service.data, taken["id"]) / str(
        one(service.engine, select(submissions.c.target).where(submissions.c.id == taken["id"]))
    )
    outcome = score(load(contest), "files", target, None, Runtime())
    assert queue.finish(service.engine, fast, outcome, later)
    assert not queue.finish(service.engine, slow, outcome, later)  # the first holder's answer is dropped
    queue.retry(service.engine, slow, "late", later)  # and cannot requeue a finished job
    assert one(service.engine, select(func.count()).select_from(results)) == 1
    assert one(service.engine, select(jobs.c.state)) == "done"
    assert queue.claim(service.engine, "any", later + timedelta(hours=1)) is None


def test_podium_failures_are_retried_then_end_in_error_uncharged(tmp_path: Path) -> None:
    contest = write_contest(tmp_path / "contest", quota="per_day = 1")
    clock = Clock(at("2026-03-02T12:00:00Z"))
    service, token = set_up(f"sqlite:///{tmp_path / 'db.sqlite3'}", contest, tmp_path / "data", ("alpha",), clock)

    upload = demo_archive(contest, tmp_path / "upload")
    taken = take(
        service.engine,
        load(contest),
        service.data,
        Caller(1, "alpha", False),
        Upload(upload, "demo.tar.gz", 1, "0" * 64, None),
        clock(),
        False,
    )
    truth = tmp_path / "contest" / "demo" / "truth"
    hidden = truth.with_name("truth-gone")
    truth.rename(hidden)  # the organizer's truth vanishes: podium's side, not the team's
    worker = Worker(service.engine, service.data, clock=clock)
    for _ in range(queue.MAX_ATTEMPTS):
        assert worker.work_once()
    assert not worker.work_once()
    with reading(service.engine) as connection:
        row = connection.execute(select(submissions).where(submissions.c.id == taken["id"])).one()
    assert row.status == "error" and "not counted in your quota" in row.reason
    hidden.rename(truth)
    with LiveServer(service) as live:
        assert live.call("GET", "/api/quota", token["alpha"]).body["today"] == 0


@pytest.mark.parametrize("uploads", [100])
def test_concurrent_uploads_are_all_accounted_for(database_url: str, tmp_path: Path, uploads: int) -> None:
    contest = write_contest(
        tmp_path / "contest", "camera-traps", quota="per_day = 1000"
    )  # a CSV, scored in milliseconds
    clock = Clock(at("2026-03-02T12:00:00Z"))
    teams = tuple(f"team{i:02d}" for i in range(10))
    service, token = set_up(database_url, contest, tmp_path / "data", teams, clock)
    service.slots = UploadSlots(
        per_team=uploads, per_address=uploads
    )  # every upload at once, from one address (test_service_security tests the caps)
    csv = (get("camera-traps").write_demo(tmp_path / "demo").submission / "team.tsv").read_bytes()
    with LiveServer(service) as live:

        def send(i: int) -> tuple[int, int]:
            answer = live.call(
                "POST", "/api/submissions", token[teams[i % 10]], body=csv, query={"filename": "team.tsv"}
            )
            return answer.status, answer.body["id"]

        with ThreadPoolExecutor(max_workers=uploads) as pool:
            answers = list(pool.map(send, range(uploads)))
    assert [status for status, _ in answers] == [201] * uploads
    assert len({i for _, i in answers}) == uploads
    stop = threading.Event()
    workers = [
        threading.Thread(target=Worker(service.engine, service.data, clock=clock).run, args=(stop,)) for _ in range(2)
    ]
    for thread in workers:
        thread.start()
    try:
        wait_for(
            lambda: one(service.engine, select(func.count()).select_from(results)) == uploads,
            120,
            "every upload to be scored",
        )
    finally:
        stop.set()
        for thread in workers:
            thread.join(timeout=60)
    assert (
        one(service.engine, select(func.count()).select_from(submissions).where(submissions.c.status == "scored"))
        == uploads
    )
    assert one(service.engine, select(func.max(jobs.c.attempts))) == 1


def test_two_machines_one_postgresql_queue_and_a_dask_cluster_lose_nothing_and_score_nothing_twice(
    postgres_server, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """Two ``podium worker --scheduler`` processes on one PostgreSQL queue, scoring on two Dask workers:
    one podium worker and one Dask worker are killed with SIGKILL while jobs run. Every submission is
    scored exactly once, with the scores a local evaluation gives."""
    url = postgres_server.new_database()
    contest_path = write_contest(tmp_path / "contest", "glas", quota="per_day = 10")
    write_set(
        tmp_path / "contest" / "demo", n_images=12, shape=(522, 775), glands=15, seed=5
    )  # longer jobs than the demo's
    teams = tuple(f"team{k}" for k in range(8))
    clock = Clock(at("2026-03-02T12:00:00Z"))
    service, _ = set_up(url, contest_path, tmp_path / "data", teams, clock)
    contest = load(contest_path)
    archive = demo_archive(contest_path, tmp_path / "upload")
    for team_id, name in enumerate(teams, start=1):
        upload = Upload(archive, "submission.tar.gz", archive.stat().st_size, "0" * 64, None)
        assert (
            take(service.engine, contest, service.data, Caller(team_id, name, False), upload, clock(), False)["status"]
            == "queued"
        )
    expected = score(contest, "files", contest_path.parent / "demo" / "submission", None, Runtime())

    cluster = Cluster(workers=2)
    podium_workers = [start_worker(url, service.data, "--scheduler", cluster.address) for _ in range(2)]
    try:
        victim = podium_workers[0]
        holding = (
            select(func.count())
            .select_from(jobs)
            .where(jobs.c.state == JOB_RUNNING, jobs.c.worker.like(f"%:{victim.pid}:%"))
        )
        wait_for(lambda: one(service.engine, holding) == 1, 60, "the first podium worker to hold a job")
        os.killpg(victim.pid, signal.SIGKILL)
        running = (
            select(func.count())
            .select_from(jobs)
            .where(jobs.c.state == JOB_RUNNING, ~jobs.c.worker.like(f"%:{victim.pid}:%"))
        )
        wait_for(lambda: one(service.engine, running) == 1, 60, "the other podium worker to hold a job")
        cluster.kill(cluster.workers[0])
        done = select(func.count()).select_from(jobs).where(jobs.c.state == JOB_DONE)
        wait_for(lambda: one(service.engine, done) == len(teams), 120, "every job to be done")
    finally:
        for process in podium_workers:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
        cluster.stop()
    with reading(service.engine) as connection:
        rows = connection.execute(
            select(results.c.submission_id, results.c.public_scores, results.c.private_scores)
        ).all()
        statuses = connection.execute(select(submissions.c.status)).scalars().all()
        attempts = connection.execute(select(func.max(jobs.c.attempts))).scalar_one()
    assert sorted(r.submission_id for r in rows) == list(
        range(1, len(teams) + 1)
    )  # one result each: nothing lost, nothing twice
    assert set(statuses) == {"scored"}
    assert attempts == 2  # the killed worker's job was taken again
    assert all(r.public_scores == expected.public_scores and r.private_scores == expected.private_scores for r in rows)
