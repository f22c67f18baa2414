"""Peak memory of ``podium evaluate`` against the size of its input: bytes per row, in one run.

Each evaluation is a process of its own (``podium evaluate --workers 1 --json -``, the document
written to /dev/null), and its peak resident memory is the kernel's (``ru_maxrss`` of that one
process, from ``wait4`` in a small launcher: a child's peak starts at its parent's size). The growth from the smallest set to the largest, divided by the rows
added, is the memory per row; a challenge that holds one image at a time must stay flat.

- face-clustering: 250,000 / 500,000 / 1,000,000 rows (truth and submission alike);
- camera-traps: 25,000 / 50,000 / 100,000 photos, per row of either table;
- camera-traps crowd: the 100,000-photo truth with ``CROWD`` more boxes in its first photo, and a
  submission piling 110,000 / 220,000 / 440,000 rows into that photo (under the compiled scan's 20
  million characters): ``CROWD`` pairs of boxes a row, per row of the submission;
- ilsvrc2012-cls: the first 12,500 / 25,000 / 50,000 lines of the kit's truth and demo guesses;
- ilsvrc2012-loc: the same lines with Task 2 guesses, and always the kit's whole box archive;
- fuzzy-jaccard: 12 / 25 / 50 images of 2000x2000, 4 classes; glas: 50 / 100 / 200 images.

Memory is not timing: one run each, on the sets of ``dask_scaling.py`` and the other scripts.

    .venv/bin/python benchmarks/memory.py
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from dask_scaling import HERE, KIT, Case, _subset, fuzzy_case, glas_case, ilsvrc_case
from timing import machine_header

from podium.synthetic.camera_traps import write_tables
from podium.synthetic.face_clustering import write_csvs

FRACTIONS = (0.25, 0.5, 1.0)


def face_case(fraction: float) -> Case:
    n = round(1_000_000 * fraction)

    def write(folder: Path) -> None:
        write_csvs(folder, n_images=n, n_identities=n // 10, seed=1)

    folder = _subset(HERE / "data", f"face-clustering-{n}", write)
    return Case(
        "face-clustering", folder / "truth.csv", folder / "submission" / "team.csv", {}, 2 * n, f"{n:,} rows each"
    )


def camera_case(fraction: float) -> Case:
    photos = round(100_000 * fraction)

    def write(folder: Path) -> None:
        write_tables(folder, photos, seed=1, empty_share=0.05, false_per_photo=1.5)

    folder = _subset(HERE / "data", f"camera-traps-memory-{photos}", write)
    truth, submission = folder / "truth.tsv", folder / "submission" / "team.tsv"
    rows = sum(1 for _ in truth.open()) + sum(1 for _ in submission.open()) - 2
    return Case("camera-traps", truth, submission, {}, rows, f"{photos:,} photos, {rows:,} rows")


CROWD = 60  # truth boxes in the crowded photo: a grid of 10 x 6 boxes that do not overlap


def crowd_case(fraction: float) -> Case:
    rows = round(440_000 * fraction)
    base = camera_case(1.0)

    def write(folder: Path) -> None:
        folder.mkdir(parents=True)
        header, first, *rest = base.truth.read_text().splitlines(keepends=True)
        name = first.split("\t")[0]
        grid = [
            f"{name}\t{0.05 + 0.09 * (k % 10):.4f} {0.1 + 0.15 * (k // 10):.4f} 0.0800 0.1200\t{k % 2}\n"
            for k in range(CROWD)
        ]
        (folder / "truth.tsv").write_text(header + "".join(grid) + first + "".join(rest))
        (folder / "team.tsv").write_text(header + "".join(grid[k % CROWD] for k in range(rows)))

    folder = _subset(HERE / "data", f"camera-traps-crowd-{rows}", write)
    return Case(
        "camera-traps", folder / "truth.tsv", folder / "team.tsv", {}, rows, f"crowd: {rows * CROWD / 1e6:.1f}M pairs"
    )


def cls_case(fraction: float) -> Case | None:
    if not KIT.is_dir():
        return None
    n = round(50_000 * fraction)

    def write(folder: Path) -> None:
        folder.mkdir(parents=True)
        for name in ("ILSVRC2012_validation_ground_truth.txt", "demo.val.pred.txt"):
            (folder / name).write_text("".join((KIT / name).read_text().splitlines(keepends=True)[:n]))

    folder = _subset(HERE / "data", f"ilsvrc2012-cls-{n}", write)
    return Case(
        "ilsvrc2012-cls",
        folder / "ILSVRC2012_validation_ground_truth.txt",
        folder / "demo.val.pred.txt",
        {},
        n,
        f"{n:,} images",
    )


LAUNCHER = """import os, sys
pid = os.fork()
if pid == 0:
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    os.execv(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_maxrss)
"""


def peak_mb(case: Case) -> float:
    """The peak resident memory of one ``podium evaluate`` process on ``case``, in MB.

    A child's peak starts from its parent's resident size at the fork, so the command is
    started by a small launcher process, not by this one (which holds the sets).
    """
    argv = [
        sys.executable,
        "-m",
        "podium",
        "evaluate",
        case.challenge,
        "--truth",
        str(case.truth),
        "--submission",
        str(case.submission),
        "--workers",
        "1",
        "--json",
        "-",
        "--quiet",
        *(a for k, v in case.settings.items() for a in ("--set", f"{k}={v}")),
    ]
    done = subprocess.run([sys.executable, "-c", LAUNCHER, *argv], capture_output=True, text=True, check=True)
    code, kilobytes = (int(v) for v in done.stdout.split())
    assert code == 0, done.stderr
    return kilobytes / 1024


def main() -> None:
    machine_header(1)
    print(f"{'challenge':<16}{'set':<36}{'rows':>11}{'peak MB':>9}   (rows: images for the image challenges)")
    for make in (face_case, camera_case, crowd_case, cls_case, ilsvrc_case, fuzzy_case, glas_case):
        cases = [make(f) for f in FRACTIONS]
        if cases[0] is None:
            print(f"{make.__name__}: left out (no ../shared/data/ilsvrc2012)")
            continue
        peaks = []
        for case in cases:
            assert case is not None
            peaks.append(peak_mb(case))
            print(f"{case.challenge:<16}{case.what[:35]:<36}{case.items:>11,}{peaks[-1]:>9.0f}")
        first, last = cases[0], cases[-1]
        assert first is not None and last is not None
        per_row = (peaks[-1] - peaks[0]) * 2**20 / (last.items - first.items)
        print(f"{'':<16}growth per row: {per_row:,.0f} bytes\n")


if __name__ == "__main__":
    main()
