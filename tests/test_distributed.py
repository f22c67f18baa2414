"""Scoring on a real Dask cluster (``dask scheduler`` and ``dask worker`` processes on 127.0.0.1).

The result of every challenge is the local one bit for bit, with and without a
contest split; a worker killed mid-job changes nothing; an unreachable scheduler and workers
that cannot see the files are the organizer's errors (exit 2), named.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from conftest import run
from dask_cluster import Cluster
from podium.challenges import IDS, get
from podium.core.errors import UsageError
from podium.core.parameters import resolve
from podium.core.result import Result
from podium.scoring import distributed, engine
from podium.synthetic.glas import write_set


def document(result: Result) -> dict[str, Any]:
    """The full document without the time it was made."""
    data = json.loads(result.to_json())
    data["signature"].pop("created")
    return data


@pytest.mark.parametrize("challenge_id", IDS)
@pytest.mark.parametrize("with_split", [False, True], ids=["whole", "split"])
def test_every_challenge_scores_the_same_on_the_cluster(
    challenge_id: str, with_split: bool, dask_cluster: Cluster, tmp_path: Path
) -> None:
    challenge = get(challenge_id)
    demo = challenge.write_demo(tmp_path)
    split_of = None
    if with_split:
        units = challenge.units(demo.truth, resolve(challenge.parameters, demo.settings))
        split_of = {unit: ("public" if k % 3 else "private") for k, unit in enumerate(units)}
    local = engine.evaluate(challenge_id, demo.truth, demo.submission, demo.settings, split_of=split_of)
    seen: list[tuple[int, int]] = []
    remote = engine.evaluate(
        challenge_id,
        demo.truth,
        demo.submission,
        demo.settings,
        split_of=split_of,
        scheduler=dask_cluster.address,
        progress=lambda done, total: seen.append((done, total)),
    )
    assert local.status == "scored", local.errors
    assert document(remote) == document(local)
    assert seen and seen[-1][0] == seen[-1][1]


def test_a_worker_killed_mid_job_changes_nothing(tmp_path: Path) -> None:
    truth, submission = write_set(tmp_path / "glas", n_images=24, shape=(522, 775), glands=15, seed=3)
    expected = document(engine.evaluate("glas", truth, submission))
    cluster = Cluster(workers=2)
    try:
        victim = cluster.workers[0]

        def kill_once(done: int, total: int) -> None:
            if done == 3 and victim.poll() is None:
                cluster.kill(victim)  # the other worker still has tasks running; the victim had its own

        assert (
            document(engine.evaluate("glas", truth, submission, scheduler=cluster.address, progress=kill_once))
            == expected
        )
        assert victim.poll() is not None
    finally:
        cluster.stop()


def test_an_unreachable_scheduler_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(distributed, "CONNECT_TIMEOUT_S", 1.0)
    demo = get("glas").write_demo(tmp_path)
    code, output = run(
        "evaluate",
        "glas",
        "--truth",
        str(demo.truth),
        "--submission",
        str(demo.submission),
        "--scheduler",
        "tcp://127.0.0.1:9",
    )
    assert code == 2
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in output
    assert "Traceback" not in output


def test_a_job_of_one_item_is_scored_here_without_the_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(distributed, "CONNECT_TIMEOUT_S", 1.0)
    demo = get("camera-traps").write_demo(tmp_path)
    result = engine.evaluate(
        "camera-traps", demo.truth, demo.submission, scheduler="tcp://127.0.0.1:9"
    )  # never reached
    assert document(result) == document(engine.evaluate("camera-traps", demo.truth, demo.submission))
    units = get("camera-traps").units(demo.truth, resolve(get("camera-traps").parameters, {}))
    split_of = {unit: ("public" if k % 2 else "private") for k, unit in enumerate(units)}
    with pytest.raises(UsageError, match="cannot reach the Dask scheduler"):  # two parts: the cluster is asked
        engine.evaluate("camera-traps", demo.truth, demo.submission, split_of=split_of, scheduler="tcp://127.0.0.1:9")


def test_workers_that_cannot_see_the_files_are_named(
    dask_cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    demo = get("glas").write_demo(tmp_path / "here")
    monkeypatch.chdir(tmp_path)  # relative paths: the workers run in folders of their own
    truth, submission = (Path(os.path.relpath(p, tmp_path)) for p in (demo.truth, demo.submission))
    with pytest.raises(UsageError, match=r"Dask worker tcp://127\.0\.0\.1:\d+ does not see here/"):
        engine.evaluate("glas", truth, submission, scheduler=dask_cluster.address)
    code, output = run(
        "evaluate", "glas", "--truth", str(truth), "--submission", str(submission), "--scheduler", dask_cluster.address
    )
    assert code == 2 and "must be at the same paths on every worker" in output


@pytest.mark.parametrize("address", ["tcp://127.0.0.1:9", "not an address"])
def test_a_service_worker_refuses_to_start_without_its_scheduler(
    address: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(distributed, "CONNECT_TIMEOUT_S", 1.0)
    code, output = run("worker", "--data", str(tmp_path), "--scheduler", address)
    assert code == 2, output
    assert f"cannot reach the Dask scheduler at {address}" in output and "Traceback" not in output


def test_the_service_hands_its_scheduler_to_every_job(
    dask_cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from podium.contest import load
    from podium.service.scoring import Runtime, score
    from podium.service.server import worker_argv
    from service_helpers import write_contest

    argv = worker_argv(tmp_path, Runtime("none", None, dask_cluster.address))
    assert argv[argv.index("--scheduler") + 1] == dask_cluster.address
    contest = load(write_contest(tmp_path / "contest", "glas"))
    submission = tmp_path / "contest" / "demo" / "submission"
    on_cluster = score(contest, "files", submission, None, Runtime(scheduler=dask_cluster.address))
    here = score(contest, "files", submission, None, Runtime())
    assert on_cluster.status == "scored" and (on_cluster.public_scores, on_cluster.private_scores) == (
        here.public_scores,
        here.private_scores,
    )
    monkeypatch.setattr(distributed, "CONNECT_TIMEOUT_S", 1.0)
    with pytest.raises(
        UsageError, match="cannot reach the Dask scheduler"
    ):  # the worker retries the job: podium's failure, not the team's
        score(contest, "files", submission, None, Runtime(scheduler="tcp://127.0.0.1:9"))


def test_a_client_starts_with_the_garbage_collected_before_and_paused(monkeypatch: pytest.MonkeyPatch) -> None:
    """An old client finalized inside a new client's start would wait on the lock that start holds (a hang)."""
    import gc

    import distributed as dask_distributed

    finalized: list[str] = []
    seen: list[tuple[bool, list[str]]] = []

    class Old:  # garbage in a cycle, as Dask's clients are: only the collector finalizes it
        def __del__(self) -> None:
            finalized.append("old")

    class Recorder:
        def __init__(self, address: str, **_: object) -> None:
            seen.append((gc.isenabled(), list(finalized)))

    monkeypatch.setattr(dask_distributed, "Client", Recorder)
    old = Old()
    old.me = old  # type: ignore[attr-defined]
    del old
    assert gc.isenabled()
    distributed.connect("tcp://127.0.0.1:9")
    assert seen == [(False, ["old"])] and gc.isenabled()
