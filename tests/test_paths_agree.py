"""Every way of scoring gives the same numbers on the same random valid submissions, a test per
challenge: the Python API, the command line, a Dask cluster, and the platform entry points
(``podium codabench``, EvalAI's ``evaluate``, ``podium grand-challenge``), each started as a
platform starts it, without a contest file (the challenge named, the truth in the reference folder), and ``podium serve`` (an upload over
HTTP, scored by a worker, read back through the API).

The submissions are the demo's, changed in values by :func:`podium.synthetic.rewrites.perturb`
and written another way by :func:`podium.synthetic.rewrites.rewrite`, so that each path reads
numbers, layouts and archives of every kind the format allows.
"""

from __future__ import annotations

import json
import random
import shutil
import tarfile
from pathlib import Path
from typing import Any

import pytest

import podium
from conftest import run, run_json
from podium.challenges import IDS, get
from podium.publish.platforms.evalai import evaluate as evalai_evaluate
from podium.publish.platforms.scores import numbers_only
from podium.scoring import engine
from podium.synthetic.rewrites import perturb, rewrite

SUBMISSIONS = 2


def _files_of(submission: Path, folder: Path) -> Path:
    """The submission as a platform unpacks it into ``folder``: its files (an archive's, unpacked);
    a truth as a platform's reference folder holds it."""
    if submission.is_dir():
        shutil.copytree(submission, folder)
    elif submission.name.endswith((".zip", ".tar.gz")):
        shutil.unpack_archive(submission, folder)
    else:
        folder.mkdir(parents=True)
        shutil.copy(submission, folder)
    return folder


def _tar_gz(folder: Path, path: Path) -> Path:
    """``folder``'s files in a .tar.gz, as ``podium bundle evalai`` writes a reference folder."""
    with tarfile.open(path, "w:gz") as archive:
        for file in sorted(p for p in folder.rglob("*") if p.is_file()):
            archive.add(file, file.relative_to(folder).as_posix())
    return path


def _service(challenge: str, demo: Any, folder: Path) -> tuple[Any, str]:
    """``podium serve``'s service for a contest on ``demo`` without a split (every score shown to
    the team), on SQLite, and a team's token."""
    from service_helpers import CONTEST, Clock, at, set_up

    measured = {p.name for p in get(challenge).parameters if p.role == "measured"}
    parameters = "[parameters]\n" + "".join(
        f"{key} = {json.dumps(str(value))}\n" for key, value in demo.settings.items() if key not in measured
    )
    contest = folder / "contest.toml"
    contest.write_text(
        CONTEST.format(
            id=f"paths-{challenge}",
            challenge=challenge,
            truth=demo.truth,
            timezone="UTC",
            extra=parameters,
            kind="files",
            quota="per_day = 100",
            ranking='final = "best"',
            upload_mb=50,
        )
    )
    service, tokens = set_up(
        f"sqlite:///{folder / 'podium.sqlite3'}", contest, folder / "data", ("team",), Clock(at("2026-03-10T12:00:00Z"))
    )
    return service, tokens["team"]


@pytest.mark.parametrize("challenge", IDS)
def test_every_path_gives_the_same_numbers(challenge: str, tmp_path: Path, dask_cluster: Any) -> None:
    from podium.service.client import packed
    from podium.service.worker import Worker
    from service_helpers import LiveServer

    demo = get(challenge).write_demo(tmp_path / "demo")
    sets = [f"{key}={value}" for key, value in demo.settings.items()]
    set_options = [option for setting in sets for option in ("--set", setting)]
    reference = _files_of(demo.truth, tmp_path / "reference")
    service, token = _service(challenge, demo, tmp_path)
    measured = {p.name for p in get(challenge).parameters if p.role == "measured"}
    for number in range(SUBMISSIONS):
        rng = random.Random(f"paths:{challenge}:{number}")
        case = tmp_path / f"case{number}"
        _, submission = rewrite(challenge, perturb(challenge, demo.submission, case, rng), case / "written", rng)
        files = _files_of(submission, case / "files")

        api = podium.evaluate(challenge, demo.truth, submission, **demo.settings)
        assert not api.errors, api.errors
        expected = json.dumps(api.scores, sort_keys=True)
        numbers = numbers_only(challenge, api.scores)[0]

        code, document = run_json(challenge, demo.truth, submission, *set_options)
        assert code == 0 and json.dumps(document["scores"], sort_keys=True) == expected, "the command line"

        cluster = engine.evaluate(challenge, demo.truth, submission, demo.settings, scheduler=dask_cluster.address)
        assert json.dumps(cluster.scores, sort_keys=True) == expected, "a Dask cluster"

        platform = case / "codabench"
        shutil.copytree(reference, platform / "input" / "ref")
        _files_of(submission, platform / "input" / "res")
        code, output = run(
            "codabench",
            challenge,
            "--input",
            str(platform / "input"),
            "--output",
            str(platform / "output"),
            "--workers",
            "1",
            *set_options,
        )
        assert code == 0, output
        assert json.loads((platform / "output" / "scores.json").read_text()) == numbers, "podium codabench"

        annotation = (
            reference / demo.truth.name if demo.truth.is_file() else _tar_gz(reference, case / "annotation.tar.gz")
        )
        answer = evalai_evaluate(str(annotation), str(submission), "test", challenge=challenge, settings=sets)
        assert answer["result"][0]["test_split"] == numbers, "EvalAI's evaluate"

        code, output = run(
            "grand-challenge",
            challenge,
            "--input",
            str(files),
            "--output",
            str(case / "gc"),
            "--ground-truth",
            str(reference),
            "--workers",
            "1",
            *set_options,
        )
        assert code == 0, output
        assert json.loads((case / "gc" / "metrics.json").read_text())["aggregates"] == numbers, "podium grand-challenge"

        # the service has no measured parameters (time, memory) for an uploaded file: the API without them
        unmeasured = podium.evaluate(
            challenge, demo.truth, submission, **{k: v for k, v in demo.settings.items() if k not in measured}
        )
        with LiveServer(service) as live:
            sent = live.call(
                "POST",
                "/api/submissions",
                token,
                body=packed(files, case).read_bytes(),
                query={"filename": "submission.tar.gz"},
            )
            assert sent.status == 201, sent.body
            while Worker(service.engine, service.data, clock=service.clock).work_once():
                pass
            answer = live.call("GET", f"/api/submissions/{sent.body['id']}", token).body
        assert answer["status"] == "scored", answer
        assert json.dumps(answer["result"]["scores"], sort_keys=True) == json.dumps(
            unmeasured.scores, sort_keys=True
        ), "podium serve"
