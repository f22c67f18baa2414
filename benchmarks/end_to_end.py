"""End to end, as a user runs it: ``podium evaluate`` in a new process against the script a user
would write for the same rule (``benchmarks/peers/``), also in a new process (issue 40, goals 1 and 7).

Each row runs podium and its peer alternately (interleaved, so the machine's load falls on both
alike), checks that both give the same numbers (podium's from one more run with ``--json``), and prints the median wall and CPU seconds of
``--repeats`` pairs (a child's CPU is read from ``getrusage`` once it is reaped). Rows:

- ilsvrc2012-cls, 50,000 images (the kit's demo submission and truth in ../shared/data/ilsvrc2012,
  else synthetic ones of the same shape), and 16x that (800,000, synthetic);
- face-clustering, 1,000,000 images and 5,000,000 (goal 7: a truth over 2,000,000 lines);
- camera-traps, 100,000 photos, against the plain Python script.

Goal: podium no slower than the peer at the real size, >= 3x faster at 16x (camera-traps: >= 3x
the plain Python script at 100,000 photos).

    .venv/bin/pip install -r benchmarks/requirements.txt
    .venv/bin/python benchmarks/end_to_end.py [--repeats 5] [--only ilsvrc2012-cls,face-clustering,camera-traps] [--no-large]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from timing import Timed, machine_header, timed

from podium.synthetic.camera_traps import write_tables
from podium.synthetic.face_clustering import write_csvs
from podium.synthetic.ilsvrc2012 import write_classification

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "end-to-end"
KIT = HERE.parents[1] / "shared" / "data" / "ilsvrc2012"


@dataclass(frozen=True)
class Case:
    """One row: the challenge, its size, its files, podium's options, and how to read the same numbers from both sides."""

    challenge: str
    size: str
    truth: Path
    submission: Path
    options: tuple[str, ...]
    peer: str  # the script under peers/
    same: Callable[[dict, dict], bool]  # podium's scores, the peer's output


def run_json(argv: list[str]) -> dict:
    return json.loads(subprocess.run(argv, capture_output=True, text=True, check=True).stdout)


def podium_argv(case: Case) -> list[str]:
    """The command a user types: its table of scores on stdout (``--json`` writes the whole result document besides)."""
    return [
        sys.executable,
        "-m",
        "podium",
        "evaluate",
        case.challenge,
        "--truth",
        str(case.truth),
        "--submission",
        str(case.submission),
        *case.options,
    ]


def podium(case: Case) -> str:
    """A timed run, as a user runs it: the table it prints (the scores to compare come from an untimed run with ``--json -``)."""
    return subprocess.run(podium_argv(case), capture_output=True, text=True, check=True).stdout


def podium_scores(case: Case) -> dict:
    return run_json([*podium_argv(case), "--json", "-", "--quiet"])["scores"]


def peer(case: Case) -> dict:
    return run_json([sys.executable, str(HERE / "peers" / case.peer), str(case.truth), str(case.submission)])


def median(runs: Sequence[Timed[object]]) -> tuple[float, float]:
    return statistics.median(r.wall for r in runs), statistics.median(r.cpu for r in runs)


def compare(case: Case, repeats: int) -> None:
    ours: list[Timed[str]] = []
    theirs: list[Timed[dict]] = []
    for _ in range(repeats):
        ours.append(timed(lambda: podium(case)))
        theirs.append(timed(lambda: peer(case)))
    scores = podium_scores(case)
    assert case.same(scores, theirs[0].value), (case.challenge, case.size, scores, theirs[0].value)
    (wall, cpu), (peer_wall, peer_cpu) = median(ours), median(theirs)
    print(
        f"{case.challenge:16s} {case.size:>11s}   {wall:7.2f} {cpu:7.2f}   {peer_wall:7.2f} {peer_cpu:7.2f}   {peer_cpu / cpu:5.2f}x {peer_wall / wall:5.2f}x   {case.peer}",
        flush=True,
    )


def close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-12 * max(1.0, abs(a))


def synthetic_classification(n: int) -> tuple[Path, Path]:
    """A synthetic Task 1 truth and submission of ``n`` images, written once under ``DATA``."""
    marker = DATA / f"ilsvrc-{n}" / "paths.json"
    if not marker.exists():
        demo = write_classification(marker.parent, n, seed=1)
        marker.write_text(json.dumps([str(demo.truth), str(demo.submission / "team.txt")]))
    truth, submission = json.loads(marker.read_text())
    return Path(truth), Path(submission)


def ilsvrc_cases(large: bool) -> list[Case]:
    same = lambda ours, theirs: all(close(ours[f"error@{k}"], theirs[f"error@{k}"]) for k in range(1, 6))
    if KIT.is_dir():
        cases = [
            Case(
                "ilsvrc2012-cls",
                "50,000 kit",
                KIT / "ILSVRC2012_validation_ground_truth.txt",
                KIT / "demo.val.pred.txt",
                (),
                "ilsvrc2012_cls.py",
                same,
            )
        ]
    else:
        cases = [Case("ilsvrc2012-cls", "50,000", *synthetic_classification(50_000), (), "ilsvrc2012_cls.py", same)]
    if large:
        cases.append(
            Case("ilsvrc2012-cls", "800,000", *synthetic_classification(800_000), (), "ilsvrc2012_cls.py", same)
        )
    return cases


def face_cases(large: bool) -> list[Case]:
    same = lambda ours, theirs: close(ours["nmi"], theirs["nmi"]) and close(ours["pairwise_f"], theirs["pairwise_f"])
    cases = []
    for n in (1_000_000, 5_000_000) if large else (1_000_000,):
        folder = DATA / f"face-{n}"
        if not (folder / "truth.csv").exists():
            write_csvs(folder, n_images=n, n_identities=n // 10, seed=1)
        cases.append(
            Case(
                "face-clustering",
                f"{n:,}",
                folder / "truth.csv",
                folder / "submission" / "team.csv",
                (),
                "face_clustering.py",
                same,
            )
        )
    return cases


def camera_cases() -> list[Case]:
    folder = DATA / "camera-100000"
    if not (folder / "truth.tsv").exists():
        write_tables(folder, 100_000, seed=1, empty_share=0.05, false_per_photo=1.5)
    same = lambda ours, theirs: ours["points"] == theirs["points"]
    return [
        Case(
            "camera-traps",
            "100,000",
            folder / "truth.tsv",
            folder / "submission" / "team.tsv",
            (),
            "camera_traps.py",
            same,
        )
    ]


def compiled() -> None:
    """podium's modules compiled to bytecode, as an installed wheel's are: from an editable install with
    PYTHONDONTWRITEBYTECODE set, every run would otherwise compile each module changed since its last .pyc."""
    import compileall

    import podium

    compileall.compile_dir(Path(podium.__file__).parent, quiet=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", default="ilsvrc2012-cls,face-clustering,camera-traps")
    parser.add_argument(
        "--no-large", dest="large", action="store_false", help="Skip the 16x ILSVRC and the 5M face-clustering rows."
    )
    args = parser.parse_args()
    compiled()
    machine_header(args.repeats, "median")
    chosen = set(args.only.split(","))
    cases = ilsvrc_cases(args.large) if "ilsvrc2012-cls" in chosen else []
    cases += face_cases(args.large) if "face-clustering" in chosen else []
    cases += camera_cases() if "camera-traps" in chosen else []
    print(f"{'challenge':16s} {'size':>11s}   {'podium evaluate':>15s}   {'peer script':>15s}   {'peer / podium':>13s}")
    print(
        f"{'':16s} {'':>11s}   {'wall s':>7s} {'CPU s':>7s}   {'wall s':>7s} {'CPU s':>7s}   {'CPU':>6s} {'wall':>6s}"
    )
    for case in cases:
        compare(case, args.repeats)


if __name__ == "__main__":
    main()
