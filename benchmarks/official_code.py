"""podium against the organizers' own scoring code, on the same files, in one run.

    .venv/bin/python benchmarks/official_code.py [--glas-code DIR] [--ilsvrc-code DIR] [--repeats 3] [--sets fixture,synthetic,ilsvrc]

- GlaS: the official evaluation v6 (``F1score.m``, ``ObjectDice.m``, ``ObjectHausdorff.m`` from
  evaluation_v6.zip on the GlaS contest site); ``--glas-code`` names the folder they are in.
- ILSVRC 2012 Task 1: the development kit's ``evaluation/eval_flat.m``; ``--ilsvrc-code`` names
  that folder.

The script never downloads them and the repository never holds them. When GNU Octave is installed
(Debian: ``octave``, and ``octave-image`` for GlaS) and the folder is given, the official code runs
in Octave; otherwise the in-tree transcription (``official_transcription.py``) runs in Python, and
every line says which. Octave's statistics package (1.5.3 in Debian 12) has no ``knnsearch``,
which ``ObjectHausdorff.m`` calls: the script then adds its own, exact for pixel coordinates (the
nearest pixel by ``bwdist`` on the points' bounding box, its distance in double precision). Octave
runs with podium's allocator settings (glibc's mmap and trim thresholds, ``podium/accel/allocator.py``).

Sets: the 4 real fixture images (``../shared/data/glas-fixture``, skipped when absent); 40
synthetic label images of 775x522 with 10 to 30 glands, some missed, split or false
(``podium.synthetic.glas``); the kit's 50,000-line Task 1 demo (``../shared/data/ilsvrc2012``).

Timing, best of ``--repeats``:
- GlaS, per image: reading both label images and computing the three scores, in the baseline's own
  process (Octave's ``tic``/``toc``, its start-up excluded) and in this one (podium's
  ``evaluate_item``: reading, checks, scores, the image's details), one process each. podium's
  side runs ``--repeats`` times and then again until its runs fill ``PODIUM_SECONDS`` of wall time
  per image (as ``timeit``'s autorange does; a run takes milliseconds, and on these VMs the first
  ten are up to 40% slower than later ones); the official code's runs take 0.1 to 3 s each, so
  ``--repeats`` of them already fill more than that.
- ILSVRC: the kit's demo (``eval_flat`` for 1..5 guesses, each call reading both files) against one
  ``podium.evaluate`` in this process, the truth read again (podium's truth cache cleared).

Agreement, checked before any time is printed: per image, Dice and Hausdorff equal to 1e-9
(relative); F1 equal to the code's when podium's matching counts false negatives as the code does,
and to podium's own wherever that count and the rules' agree (``official_transcription.py`` says
how they differ; the script counts the images); ILSVRC errors equal.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import official_transcription as transcription
from PIL import Image
from timing import Timed, best_of, machine_header

import podium
from podium.accel import allocator
from podium.challenges import get
from podium.challenges.glas import Context, Item
from podium.formats import label_images, truth_cache
from podium.metrics import object_segmentation
from podium.synthetic.glas import make_glands, segment

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
DATA = Path(__file__).resolve().parent / "data" / "official"
GLAS_FILES = ("F1score.m", "ObjectDice.m", "ObjectHausdorff.m")
ILSVRC_FILES = ("eval_flat.m",)
GOALS = {"glas": 100.0, "ilsvrc2012-cls": 3.0}
PODIUM_SECONDS = 0.5  # the least wall time podium's runs of one GlaS image fill

KNNSEARCH_M = """function [idx, dist] = knnsearch(X, Y)
% podium's benchmark stand-in for MATLAB's knnsearch (Octave's statistics package has none):
% for each row of Y, the nearest row of X, exactly, when both hold integer pixel coordinates.
  lo = min([X; Y], [], 1);
  sz = max([X; Y], [], 1) - lo + 1;
  M = false(sz);
  at = sub2ind(sz, X(:,1) - lo(1) + 1, X(:,2) - lo(2) + 1);
  M(at) = true;
  [~, near] = bwdist(M);
  q = sub2ind(sz, Y(:,1) - lo(1) + 1, Y(:,2) - lo(2) + 1);
  [r, c] = ind2sub(sz, double(near(q)));
  dist = hypot(Y(:,1) - lo(1) + 1 - r, Y(:,2) - lo(2) + 1 - c);
  rowOf = zeros(sz, 'uint32');
  rowOf(at) = 1:size(X, 1);
  idx = double(rowOf(near(q)));
end
"""

RUN_GLAS_M = """function run_glas(list_file, out_file, repeats)
% Per image: the best of `repeats` wall times (and that run's CPU time) of imread x 2 + F1score + ObjectDice + ObjectHausdorff.
  fid = fopen(list_file); rows = textscan(fid, '%s %s %s', 'Delimiter', '\\t'); fclose(fid);
  out = fopen(out_file, 'w');
  for i = 1:numel(rows{1})
    best = [Inf, Inf];
    for r = 1:repeats
      t = tic; c = cputime;
      G = imread(rows{2}{i}); S = imread(rows{3}{i});
      f1 = F1score(S, G); dice = ObjectDice(S, G); haus = ObjectHausdorff(S, G);
      now = [toc(t), cputime - c];
      if now(1) < best(1), best = now; end
    end
    fprintf(out, '%s\\t%.17g\\t%.17g\\t%.17g\\t%.9f\\t%.9f\\n', rows{1}{i}, f1, dice, haus, best);
  end
  fclose(out);
end
"""

RUN_ILSVRC_M = """function run_ilsvrc(pred, truth, out_file, repeats)
% The kit's demo: eval_flat with 1..5 guesses; the best of `repeats` wall times of the five calls.
  best = [Inf, Inf];
  for r = 1:repeats
    t = tic; c = cputime;
    for k = 1:5
      e(k) = eval_flat(pred, truth, k);
    end
    now = [toc(t), cputime - c];
    if now(1) < best(1), best = now; end
  end
  out = fopen(out_file, 'w'); fprintf(out, '%.17g\\t', e, best(1)); fprintf(out, '%.9f\\n', best(2)); fclose(out);
end
"""


@dataclass(frozen=True)
class Scores:
    f1: float
    dice: float
    hausdorff: float


@dataclass(frozen=True)
class Row:
    name: str
    ours: Timed[Scores]
    official: Timed[Scores]
    code_rule_f1: float  # podium's matching, with the code's FN rule
    f1_rule_differs: bool  # the code's FN and the rules' FN differ on this image


def glas_sets(repeats: int) -> dict[str, list[tuple[str, Path, Path]]]:
    """(name, truth, segmentation) of each image of each set; the synthetic one written once."""
    sets: dict[str, list[tuple[str, Path, Path]]] = {}
    fixture = SHARED / "glas-fixture"
    if fixture.is_dir():
        sets["glas, 4 real fixture images"] = [
            (f"testA_{i}", fixture / "truth" / f"testA_{i}_anno.png", fixture / "submission" / f"testA_{i}_seg.png")
            for i in range(1, 5)
        ]
    else:
        print(f"{fixture} not found: the fixture set is skipped")
    folder = DATA / "glas-synthetic"
    rng = np.random.default_rng(2015)
    images = []
    for i in range(40):
        truth_path, seg_path = folder / f"image_{i:02d}_anno.png", folder / f"image_{i:02d}_seg.png"
        truth = make_glands((522, 775), int(rng.integers(10, 31)), rng, first_label=1)
        seg = segment(truth, rng, first_label=1)
        if not seg_path.exists():
            folder.mkdir(parents=True, exist_ok=True)
            Image.fromarray(truth).save(truth_path)
            Image.fromarray(seg).save(seg_path)
        images.append((f"image_{i:02d}", truth_path, seg_path))
    sets["glas, 40 synthetic images (10-30 glands)"] = images
    return sets


def podium_glas(images: list[tuple[str, Path, Path]], repeats: int) -> list[Timed[Scores]]:
    """podium's evaluate_item on each image (empty Hausdorff: infinity, as the official code)."""
    challenge, context = get("glas"), Context("objects", "inf", ())
    out = []
    for name, truth, seg in images:
        item = Item(name, truth, seg, "")
        result = best_of(
            repeats, lambda item=item: challenge.evaluate_item(context, item), what=name, min_seconds=PODIUM_SECONDS
        )  # type: ignore[misc]
        d = result.value.details
        out.append(Timed(result.wall, result.cpu, Scores(d["f1"], d["object_dice"], d["object_hausdorff"])))
    return out


def code_rule_f1(truth: Path, seg: Path) -> tuple[float, bool]:
    """F1 with podium's TP and FP but the code's FN (ground-truth objects no segmented object
    chose), and whether that FN differs from the rules' (``|G| - TP``, podium's)."""
    g_image, s_image = label_images.read_label_image(truth), label_images.read_label_image(seg)
    stats = object_segmentation.image_stats(g_image, s_image, math.inf)
    g, s = object_segmentation._Side(g_image), object_segmentation._Side(s_image)
    partner, _ = object_segmentation._partners(*object_segmentation._overlaps(s, g), s.n)
    fn = g.n - len(np.unique(partner[partner > 0]))
    if not s.n or not g.n:
        return float(not s.n and not g.n), False
    precision, recall = stats.tp / (stats.tp + stats.fp), stats.tp / (stats.tp + fn)
    return (2 * precision * recall / (precision + recall) if stats.tp else math.nan), fn != stats.fn


def octave_glas(
    octave: str, code: Path, images: list[tuple[str, Path, Path]], repeats: int, work: Path
) -> list[Timed[Scores]]:
    listing, out = work / "glas.tsv", work / "glas.out"
    listing.write_text("".join(f"{n}\t{t}\t{s}\n" for n, t, s in images))
    _octave(octave, work, [code], f"run_glas('{listing}', '{out}', {repeats})", knnsearch=True)
    rows = [line.split("\t") for line in out.read_text().splitlines()]
    return [Timed(float(r[4]), float(r[5]), Scores(float(r[1]), float(r[2]), float(r[3]))) for r in rows]


def transcribed_glas(images: list[tuple[str, Path, Path]], repeats: int) -> list[Timed[Scores]]:
    def run(truth: Path, seg: Path) -> Scores:
        g, s = np.asarray(Image.open(truth)), np.asarray(Image.open(seg))
        return Scores(
            transcription.f1_score(s, g), transcription.object_dice(s, g), transcription.object_hausdorff(s, g)
        )

    return [best_of(repeats, lambda t=t, s=s: run(t, s), what=n) for n, t, s in images]  # type: ignore[misc]


def _octave(octave: str, work: Path, code: list[Path], call: str, knnsearch: bool = False) -> None:
    """Run ``call`` in Octave with the official folders and the drivers on its path, podium's allocator settings."""
    (work / "run_glas.m").write_text(RUN_GLAS_M)
    (work / "run_ilsvrc.m").write_text(RUN_ILSVRC_M)
    paths = "".join(f"addpath('{p}'); " for p in [*code, work])
    shim = ""
    if knnsearch:
        (work / "shim").mkdir(exist_ok=True)
        (work / "shim" / "knnsearch.m").write_text(KNNSEARCH_M)
        shim = f"pkg load image; if ~exist('knnsearch'), addpath('{work / 'shim'}'); end; "
    env = os.environ | {
        "MALLOC_MMAP_THRESHOLD_": str(allocator.MMAP_THRESHOLD_BYTES),
        "MALLOC_TRIM_THRESHOLD_": str(allocator.TRIM_THRESHOLD_BYTES),
    }
    subprocess.run(
        [octave, "--quiet", "--norc", "--eval", paths + shim + call],
        cwd=work,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )


def agree(a: float, b: float) -> bool:
    return (math.isinf(a) and a == b) or abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def compare_glas(
    sets: dict[str, list[tuple[str, Path, Path]]], octave: str | None, code: Path | None, repeats: int, work: Path
) -> dict[str, float]:
    who = f"official v6 in {octave_version(octave)}" if octave and code else "official v6 transcribed (Python)"
    ratios = {}
    for title, images in sets.items():
        ours = podium_glas(images, repeats)
        theirs = (
            octave_glas(octave, code, images, repeats, work) if octave and code else transcribed_glas(images, repeats)
        )
        rows = [Row(n, o, t, *code_rule_f1(tp, sp)) for (n, tp, sp), o, t in zip(images, ours, theirs)]
        for row in rows:
            o, t = row.ours.value, row.official.value
            assert agree(o.dice, t.dice) and agree(o.hausdorff, t.hausdorff), (row.name, o, t)
            assert agree(row.code_rule_f1, t.f1) or (math.isnan(row.code_rule_f1) and math.isnan(t.f1)), (
                row.name,
                row.code_rule_f1,
                t,
            )
            assert row.f1_rule_differs or agree(o.f1, t.f1), (row.name, o, t)
        print(f"\n{title}: podium against the {who}, per image, best of {repeats}")
        print(
            f"{'image':12s} {'podium s':>9s} {'CPU s':>7s} {'official s':>11s} {'CPU s':>7s} {'ratio':>7s}   Dice, Hausdorff (equal in both)"
        )
        for row in rows:
            print(
                f"{row.name:12s} {row.ours.wall:9.4f} {row.ours.cpu:7.4f} {row.official.wall:11.4f} {row.official.cpu:7.4f} {row.official.wall / row.ours.wall:6.1f}x"
                f"   {row.ours.value.dice:.6f}, {row.ours.value.hausdorff:.4f}"
            )
        ours_mean = sum(r.ours.wall for r in rows) / len(rows)
        theirs_mean = sum(r.official.wall for r in rows) / len(rows)
        ratios[title] = theirs_mean / ours_mean
        differs = sum(r.f1_rule_differs for r in rows)
        print(
            f"{'mean':12s} {ours_mean:9.4f} {'':7s} {theirs_mean:11.4f} {'':7s} {ratios[title]:6.1f}x   (goal >= {GOALS['glas']:.0f}x); "
            f"F1 as the code counts it equal on all; podium's F1 (the rules' FN) differs on {differs} of {len(rows)}"
        )
    return ratios


def compare_ilsvrc(octave: str | None, code: Path | None, repeats: int, work: Path) -> float | None:
    kit = SHARED / "ilsvrc2012"
    if not kit.is_dir():
        print(f"\n{kit} not found: ILSVRC skipped")
        return None
    truth, pred = kit / "ILSVRC2012_validation_ground_truth.txt", kit / "demo.val.pred.txt"

    def ours() -> list[float]:
        truth_cache.clear()
        result = podium.evaluate("ilsvrc2012-cls", truth, pred, workers=1)
        return [result.scores[f"error@{k}"] for k in range(1, 6)]  # type: ignore[misc]

    mine = best_of(repeats, ours, what="podium, ilsvrc2012-cls")
    if octave and code:
        out = work / "ilsvrc.out"
        _octave(octave, work, [code], f"run_ilsvrc('{pred}', '{truth}', '{out}', {repeats})")
        values = [float(v) for v in out.read_text().split("\t")]
        theirs: Timed[list[float]] = Timed(values[5], values[6], values[:5])
        who = f"the kit's eval_flat.m in {octave_version(octave)}"
    else:
        theirs = best_of(
            repeats,
            lambda: [transcription.eval_flat(pred, truth, k) for k in range(1, 6)],
            what="eval_flat transcribed",
        )
        who = "the kit's eval_flat.m transcribed (Python)"
    assert all(abs(a - b) <= 1e-12 for a, b in zip(mine.value, theirs.value)), (mine.value, theirs.value)
    ratio = theirs.wall / mine.wall
    print(
        f"\nilsvrc2012-cls, 50,000 images, errors with 1..5 guesses {[round(e, 5) for e in mine.value]} in both; best of {repeats}"
    )
    print(f"    podium.evaluate (truth read again, checks, unit rows)   {mine.wall:7.4f} s wall, {mine.cpu:.4f} s CPU")
    print(f"    {who:56s} {theirs.wall:7.4f} s wall, {theirs.cpu:.4f} s CPU")
    print(f"    ratio {ratio:.1f}x (goal >= {GOALS['ilsvrc2012-cls']:.0f}x)")
    return ratio


def octave_version(octave: str | None) -> str:
    if not octave:
        return "no Octave"
    first = subprocess.run([octave, "--version"], capture_output=True, text=True).stdout.splitlines()[:1]
    return first[0].replace("GNU Octave, version", "Octave").strip() if first else "Octave"


def usable(folder: str | None, files: tuple[str, ...], what: str) -> Path | None:
    if folder is None:
        print(f"{what}: no folder given: the transcription runs instead")
        return None
    path = Path(folder)
    missing = [f for f in files if not (path / f).is_file()]
    if missing:
        sys.exit(f"{what}: {path} lacks {', '.join(missing)}")
    return path.resolve()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--glas-code", help="folder with F1score.m, ObjectDice.m, ObjectHausdorff.m (GlaS evaluation v6)"
    )
    parser.add_argument("--ilsvrc-code", help="the ILSVRC 2012 kit's evaluation folder (eval_flat.m)")
    parser.add_argument(
        "--octave",
        default=shutil.which("octave-cli") or shutil.which("octave"),
        help="the Octave command (default: octave-cli on PATH)",
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--sets", default="fixture,synthetic,ilsvrc", help="which of fixture, synthetic, ilsvrc to run (default: all)"
    )
    args = parser.parse_args()
    chosen = set(args.sets.split(","))
    machine_header(args.repeats)
    allocator.keep_large_blocks()  # as the podium command does
    if not args.octave:
        print("Octave not found: the transcriptions run instead")
    glas_code = usable(args.glas_code, GLAS_FILES, "GlaS")
    ilsvrc_code = usable(args.ilsvrc_code, ILSVRC_FILES, "ILSVRC")
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        sets = {
            title: images for title, images in glas_sets(args.repeats).items() if chosen & set(title.split())
        }  # "glas, 4 real fixture images"
        ratios = compare_glas(sets, args.octave, glas_code, args.repeats, work)
        cls = compare_ilsvrc(args.octave, ilsvrc_code, args.repeats, work) if "ilsvrc" in chosen else None
    print("\nsummary (official time / podium time)")
    for title, ratio in ratios.items():
        print(
            f"    {title:45s} {ratio:6.1f}x  goal >= {GOALS['glas']:.0f}x: {'met' if ratio >= GOALS['glas'] else 'NOT met'}"
        )
    if cls is not None:
        print(
            f"    {'ilsvrc2012-cls, 50,000 images, k = 1..5':45s} {cls:6.1f}x  goal >= {GOALS['ilsvrc2012-cls']:.0f}x: {'met' if cls >= GOALS['ilsvrc2012-cls'] else 'NOT met'}"
        )


if __name__ == "__main__":
    main()
