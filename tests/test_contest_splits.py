"""Public and private splits in one pass: each split's scores equal scoring that part's truth alone, exactly.

For every challenge, the demo test set is split at random; the part's truth and
submission are then written as files of their own (lines, rows or images of
that part only) and scored without a split. The whole is the unsplit score.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest

from podium.challenges import IDS, get
from podium.challenges.ilsvrc2012 import image_name
from podium.scoring.engine import evaluate

SEEDS = (1, 2, 3)


@pytest.fixture(scope="module")
def demos(tmp_path_factory: pytest.TempPathFactory) -> dict:
    folder = tmp_path_factory.mktemp("demos")
    return {challenge_id: get(challenge_id).write_demo(folder / challenge_id) for challenge_id in IDS}


def _keep_files(source: Path, target: Path, public: set[str]) -> Path:
    """A copy of a folder with the files of the public units only (and ``classes.txt``)."""
    target.mkdir(parents=True)
    for path in sorted(source.rglob("*")):
        relative = path.relative_to(source)
        if path.is_dir():
            (target / relative).mkdir(parents=True, exist_ok=True)
        elif path.name == "classes.txt" or any(path.name.startswith((unit + ".", unit + "_")) for unit in public):
            shutil.copyfile(path, target / relative)
    return target


def _keep_lines(source: Path, target: Path, keep: list[bool], header: bool) -> Path:
    lines = source.read_text().splitlines(keepends=True)
    head, body = (lines[:1], lines[1:]) if header else ([], lines)
    assert len(body) == len(keep) or not header
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("".join(head + [line for line, k in zip(body, keep) if k]))
    return target


def _row_names(path: Path) -> list[str]:
    return [line.split("\t" if "\t" in line else ",")[0].strip() for line in path.read_text().splitlines()[1:]]


def _renumber_clusters(path: Path) -> None:
    """Clusters numbered 1..K again, as the rules ask of a file (the partition is unchanged)."""
    rows = [line.split(",") for line in path.read_text().splitlines()]
    number: dict[str, int] = {}
    path.write_text("".join(f"{name},{number.setdefault(c.strip(), len(number) + 1)}\n" for name, c in rows))


def part_alone(challenge_id: str, demo, public: set[str], folder: Path) -> tuple[Path, Path, dict[str, str]]:
    """The truth, submission and settings of the public units alone."""
    settings = dict(demo.settings)
    (submitted,) = (
        sorted(demo.submission.iterdir())
        if demo.submission.is_dir() and challenge_id not in ("fuzzy-jaccard", "glas")
        else (None,)
    )
    if challenge_id in ("fuzzy-jaccard", "glas"):
        return (
            _keep_files(demo.truth, folder / "truth", public),
            _keep_files(demo.submission, folder / "submission", public),
            settings,
        )
    if challenge_id in ("face-clustering", "camera-traps"):
        stems = {Path(u).stem for u in public}
        truth = _keep_lines(
            demo.truth, folder / demo.truth.name, [n in public for n in _row_names(demo.truth)], header=True
        )
        rows = _row_names(submitted)
        header = challenge_id == "camera-traps"
        if not header:  # face-clustering's demo submission has no header
            rows = [line.split(",")[0].strip() for line in submitted.read_text().splitlines()]
        submission = _keep_lines(
            submitted, folder / "submission" / submitted.name, [Path(r).stem in stems for r in rows], header=header
        )
        if not header:
            _renumber_clusters(submission)
        return truth, submission.parent, settings
    n = len(demo.truth.read_text().splitlines())
    names = (
        [str(i) for i in range(1, n + 1)]
        if challenge_id == "ilsvrc2012-fine"
        else [image_name(i) for i in range(1, n + 1)]
    )
    keep = [name in public for name in names]
    truth = _keep_lines(demo.truth, folder / demo.truth.name, keep, header=False)
    submission = _keep_lines(submitted, folder / "submission" / submitted.name, keep, header=False)
    if challenge_id == "ilsvrc2012-fine":  # the columns stay those of the whole truth's classes
        classes = folder / "classes.txt"
        classes.write_text("".join(f"{c}\n" for c in sorted({int(x) for x in demo.truth.read_text().split()})))
        settings["classes"] = str(classes)
    if challenge_id == "ilsvrc2012-loc":
        boxes = folder / "boxes"
        boxes.mkdir()
        kept = [i for i, k in enumerate(keep, start=1) if k]
        for new, old in enumerate(kept, start=1):
            source = Path(settings["boxes"]) / f"{image_name(old)}.xml"
            if source.exists():
                shutil.copyfile(source, boxes / f"{image_name(new)}.xml")
        settings["boxes"] = str(boxes)
    return truth, submission.parent, settings


@pytest.mark.parametrize("challenge_id", IDS)
def test_each_split_equals_its_part_scored_alone(challenge_id: str, demos: dict, tmp_path: Path) -> None:
    demo = demos[challenge_id]
    challenge = get(challenge_id)
    from podium.core.parameters import resolve

    units = challenge.units(demo.truth, resolve(challenge.parameters, demo.settings))
    unsplit = evaluate(challenge_id, demo.truth, demo.submission, demo.settings)
    assert unsplit.status == "scored"
    for seed in SEEDS:
        rng = random.Random(seed)
        public = set(rng.sample(units, max(1, len(units) * rng.choice((1, 3, 5)) // 10)))
        split_of = {u: "public" if u in public else "private" for u in units}
        result = evaluate(
            challenge_id, demo.truth, demo.submission, demo.settings, split_of=split_of, workers=1 + seed % 2
        )
        assert result.scores == unsplit.scores  # the whole, from both splits' statistics
        assert result.details == unsplit.details
        assert result.splits is not None and set(result.splits) == {"public", "private"}
        assert result.splits["public"].units == len(public) and result.splits["private"].units == len(units) - len(
            public
        )
        for name, chosen in (("public", public), ("private", set(units) - public)):
            truth, submission, settings = part_alone(challenge_id, demo, chosen, tmp_path / f"{seed}-{name}")
            alone = evaluate(challenge_id, truth, submission, settings)
            assert alone.status == "scored", alone.errors
            assert result.splits[name].scores == alone.scores, (seed, name)
