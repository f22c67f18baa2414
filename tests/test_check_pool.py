"""The upload checks in check processes (podium.service.check_pool): the same answer in the upload's response, a dead process survived.

Two web apps on one database, served by real uvicorn: one checks in its
threads, the other in a pool of a real forkserver's processes; each upload is
sent to both (by two teams) and answered alike. Then the pool's process is
killed with SIGKILL: the next upload is answered 503 with nothing recorded,
and the one after it is checked by a new process.
"""

from __future__ import annotations

import signal
from pathlib import Path

import psutil
import pytest
from sqlalchemy import func, select

from podium.service.app import Service
from podium.service.check_pool import STOPPED, CheckPool, check_processes
from podium.service.client import packed
from podium.service.database import reading
from podium.service.tables import submissions
from service_helpers import Clock, LiveServer, at, set_up, write_contest


def answer(
    live: LiveServer, token: str, body: bytes, name: str
) -> tuple[int, str, str | None, list[dict[str, object]]]:
    sent = live.call("POST", "/api/submissions", token, body=body, query={"filename": name})
    return sent.status, sent.body["status"], sent.body["reason"], sent.body["problems"]


def test_checks_in_processes_answer_as_in_the_web_process(tmp_path: Path) -> None:
    contest = write_contest(tmp_path / "contest", quota="")
    clock = Clock(at("2026-03-10T12:00:00Z"))
    inline, token = set_up(
        f"sqlite:///{tmp_path / 'podium.sqlite3'}", contest, tmp_path / "data", ("alpha", "beta"), clock
    )
    pool = CheckPool("glas", 1)
    pooled = Service(inline.engine, inline.data, clock, checks=pool)
    good = packed(contest.parent / "demo" / "submission", tmp_path).read_bytes()
    try:
        with LiveServer(inline) as here, LiveServer(pooled) as there:
            for body, name in (
                (good, "good.tar.gz"),
                (b"not a png", "testA_1_seg.png"),
                (good[: len(good) // 2], "cut.tar.gz"),
            ):
                assert answer(here, token["alpha"], body, name) == answer(there, token["beta"], body, name)
            assert answer(there, token["beta"], good, "good.tar.gz")[:2] == (201, "queued")

            checkers = [
                p for p in psutil.Process().children(recursive=True) if p.ppid() != psutil.Process().pid
            ]  # the forkserver's children
            assert len(checkers) == 1
            checkers[0].send_signal(signal.SIGKILL)
            checkers[0].wait(timeout=30)
            with reading(inline.engine) as connection:
                before = connection.execute(select(func.count()).select_from(submissions)).scalar_one()
            died = there.call("POST", "/api/submissions", token["beta"], body=good, query={"filename": "good.tar.gz"})
            assert died.status == 503 and died.body["detail"] == STOPPED
            with reading(inline.engine) as connection:
                assert connection.execute(select(func.count()).select_from(submissions)).scalar_one() == before
            assert answer(there, token["beta"], good, "good.tar.gz")[:2] == (201, "queued")
    finally:
        pool.shutdown()


@pytest.mark.parametrize(
    ("cores", "workers", "web", "processes"),
    [(2, 2, 1, 0), (2, 0, 1, 1), (4, 1, 1, 2), (8, 2, 1, 4), (1, 0, 1, 0), (8, 2, 2, 2), (4, 1, 2, 0), (16, 2, 4, 1)],
)
def test_check_processes_take_the_cores_left(
    cores: int, workers: int, web: int, processes: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Beside the web processes and the workers only (each web process its own share): on shared cores the checks cost more in processes than in the web process."""
    monkeypatch.setattr("os.cpu_count", lambda: cores)
    assert check_processes(workers, web) == processes
