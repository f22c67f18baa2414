"""ILSVRC 2012: the kit's numbers on the real files, the +1 IoU boundary, label spaces, VOC AP."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import average_precision_score

import podium
from conftest import run, run_json
from podium.challenges.ilsvrc2012 import _per_class
from podium.metrics.average_precision import ranks_of, sklearn_average_precision, voc_average_precision
from podium.synthetic.ilsvrc2012 import write_meta

KIT = ("ILSVRC2012_validation_ground_truth.txt", "meta.mat", "ILSVRC2012_bbox_val.tgz")


def test_task1_demo_reproduces_the_kit_readme(shared) -> None:
    kit = shared / "data" / "ilsvrc2012"
    code, doc = run_json("ilsvrc2012-cls", kit / KIT[0], kit / "demo.val.pred.txt")
    assert code == 0
    assert [round(doc["scores"][f"error@{k}"], 4) for k in range(1, 6)] == [0.9990, 0.9980, 0.9972, 0.9962, 0.9950]
    assert doc["scores"]["top5_error"] == doc["scores"]["error@5"]


def test_task2_demo_reproduces_the_kit_readme_from_the_archive(shared) -> None:
    kit = shared / "data" / "ilsvrc2012"
    settings = ["--set", f"boxes={kit / KIT[2]}", "--set", f"meta={kit / KIT[1]}"]
    code, doc = run_json("ilsvrc2012-loc", kit / KIT[0], kit / "demo.val.pred.det.txt", *settings)
    assert code == 0, doc["errors"]
    assert [round(doc["scores"][f"loc_error@{k}"], 4) for k in range(1, 6)] == [1.0, 0.9999, 0.9998, 0.9997, 0.9996]


@pytest.fixture
def meta(tmp_path: Path) -> tuple[Path, dict[int, str]]:
    return tmp_path / "meta.mat", write_meta(tmp_path / "meta.mat", seed=3)


def write_lines(path: Path, lines) -> Path:
    path.write_text("".join(f"{line}\n" for line in lines))
    return path


def loc_case(tmp_path: Path, meta, truth_lines, boxes_per_image, guesses):
    return run_json("ilsvrc2012-loc", *write_loc_case(tmp_path, meta, truth_lines, boxes_per_image, guesses))


def write_loc_case(tmp_path: Path, meta, truth_lines, boxes_per_image, guesses) -> list:
    """Truth, submission and the --set arguments of a Task 2 case."""
    meta_path, wnid_of = meta
    truth = write_lines(tmp_path / "gt.txt", truth_lines)
    (tmp_path / "boxes").mkdir(exist_ok=True)
    for i, boxes in enumerate(boxes_per_image, start=1):
        objects = "".join(
            f"<object><name>{wnid_of[c]}</name><bndbox><xmin>{a}</xmin><ymin>{b}</ymin><xmax>{x}</xmax><ymax>{y}</ymax></bndbox></object>"
            for c, a, b, x, y in boxes
        )
        (tmp_path / "boxes" / f"ILSVRC2012_val_{i:08d}.xml").write_text(f"<annotation>\n  {objects}\n</annotation>")
    sub = write_lines(tmp_path / "sub.txt", guesses)
    return [truth, sub, "--set", f"boxes={tmp_path / 'boxes'}", "--set", f"meta={meta_path}"]


def test_iou_boundary_with_the_plus_one_convention(tmp_path: Path, meta) -> None:
    # Truth 10x10 pixels (0..9); guess 0..9 x 0..4 = 50 pixels: IoU exactly 0.5 -> right (>=).
    code, doc = loc_case(tmp_path, meta, ["7"], [[(7, 0, 0, 9, 9)]], ["7 0 0 9 4"])
    assert code == 0 and doc["scores"]["loc_error"] == 0.0
    # 0..9 x 0..3 = 40 pixels: IoU 0.4 -> wrong.
    code, doc = loc_case(tmp_path, meta, ["7"], [[(7, 0, 0, 9, 9)]], ["7 0 0 9 3"])
    assert doc["scores"]["loc_error"] == 1.0
    # One column wider, outside the truth: inter 50, union 105 -> just under 0.5 -> wrong.
    code, doc = loc_case(tmp_path, meta, ["7"], [[(7, 0, 0, 9, 9)]], ["7 0 0 10 4"])
    assert doc["scores"]["loc_error"] == 1.0


def test_any_instance_serves_any_guess_and_the_label_must_match(tmp_path: Path, meta) -> None:
    boxes = [[(7, 0, 0, 9, 9), (7, 100, 100, 119, 119)], [(3, 0, 0, 9, 9)]]
    guesses = ["5 0 0 9 9 7 100 100 119 119", "3 50 50 60 60 3 0 0 9 9"]
    _code, doc = loc_case(tmp_path, meta, ["7", "3"], boxes, guesses)
    assert doc["scores"]["loc_error@1"] == 1.0  # image 1: wrong label first; image 2: box far away
    assert doc["scores"]["loc_error@2"] == 0.0


def test_multi_label_images_average_over_their_labels(tmp_path: Path) -> None:
    truth = write_lines(tmp_path / "gt.txt", ["3 7", "5"])
    sub = write_lines(tmp_path / "sub.txt", ["7 1 2 3 4", "9 5"])
    _code, doc = run_json("ilsvrc2012-cls", truth, sub)
    # image 1: label 7 found at guess 1, label 3 at guess 4 -> e@1 = 1/2, e@4 = 0; image 2: e@1 = 1, e@2 = 0
    assert doc["scores"]["error@1"] == pytest.approx((0.5 + 1) / 2)
    assert doc["scores"]["error@2"] == pytest.approx(0.5 / 2)
    assert doc["scores"]["error@4"] == 0.0
    # per true class (the first truth label): class 3 has image 1 (errors 1/2, 1/2, 1/2, 0, 0), class 5 image 2 (1, 0, 0, 0, 0)
    assert doc["details"]["per_class"] == {
        "3": {"images": 1, "error@1": 0.5, "error@2": 0.5, "error@3": 0.5, "error@4": 0.0, "error@5": 0.0},
        "5": {"images": 1, "error@1": 1.0, "error@2": 0.0, "error@3": 0.0, "error@4": 0.0, "error@5": 0.0},
    }


@pytest.mark.parametrize("seed", range(3))
def test_per_class_sums_against_a_loop_over_classes(seed: int) -> None:
    rng = np.random.default_rng(seed)
    labels = rng.integers(1, 60, 2_000)
    errors = rng.integers(0, 4, (2_000, 5)) / rng.integers(1, 4, (2_000, 1))  # multi-label images: fractions
    ours = _per_class(labels, errors, "error")
    assert list(ours) == [str(c) for c in np.unique(labels)]
    for c in np.unique(labels):
        rows = errors[labels == c]
        expected = {"images": len(rows)} | {
            f"error@{k}": pytest.approx(float(rows[:, k - 1].sum()), rel=1e-12) for k in range(1, 6)
        }
        assert ours[str(c)] == expected


def test_wnid_sorted_labels_are_converted_and_the_mistake_is_flagged(tmp_path: Path, meta) -> None:
    meta_path, wnid_of = meta
    rng = np.random.default_rng(0)
    truth_ids = rng.integers(1, 1001, 300)
    index_of_id = {i: k for k, (i, _) in enumerate(sorted(wnid_of.items(), key=lambda p: p[1]))}
    truth = write_lines(tmp_path / "gt.txt", truth_ids)
    sub = write_lines(tmp_path / "sub.txt", [index_of_id[int(t)] for t in truth_ids])  # perfect, wrong space
    code, doc = run_json("ilsvrc2012-cls", truth, sub, "--set", f"meta={meta_path}", "--set", "labels=wnid-sorted")
    assert doc["scores"]["top1_error"] == 0.0
    code, doc = run_json("ilsvrc2012-cls", truth, sub, "--set", f"meta={meta_path}")
    assert doc["scores"]["top1_error"] > 0.99
    assert any(w["code"] == "label_space" and "labels=wnid-sorted" in w["message"] for w in doc["warnings"])
    code, output = run(
        "evaluate", "ilsvrc2012-cls", "--truth", str(truth), "--submission", str(sub), "--set", "labels=wnid-sorted"
    )
    assert code == 2 and "needs meta=" in output


@pytest.mark.parametrize(
    ("lines", "code_name", "fragment", "line"),
    [
        (["1 2 3"], "line_count", "has 1 line; the ground truth has 2 images", None),
        (["1 2 x", "4"], "not_a_number", "'x' is not a number", 1),
        (["1 2.5", "4"], "not_an_integer", "labels must be integers", 1),
    ],
)
def test_task1_rejections(tmp_path: Path, lines, code_name: str, fragment: str, line) -> None:
    truth = write_lines(tmp_path / "gt.txt", ["1", "2"])
    code, doc = run_json("ilsvrc2012-cls", truth, write_lines(tmp_path / "sub.txt", lines))
    assert code == 1
    assert any(e["code"] == code_name and fragment in e["message"] and e["line"] == line for e in doc["errors"]), doc[
        "errors"
    ]


@pytest.mark.parametrize("seed", range(3))
def test_task1_labels_written_as_decimals_score_as_integers(tmp_path: Path, seed: int) -> None:
    """Integer labels go through the integer reader, ``3.0`` through the float reader: same scores."""
    rng = np.random.default_rng(seed)
    truth = write_lines(tmp_path / "gt.txt", [str(v) for v in rng.integers(1, 8, 40)])
    guesses = rng.integers(1, 8, (40, 5))
    as_integers = write_lines(tmp_path / "int.txt", [" ".join(map(str, row)) for row in guesses])
    as_decimals = write_lines(tmp_path / "dec.txt", [" ".join(f"{v}.0" for v in row) for row in guesses])
    scores = [podium.evaluate("ilsvrc2012-cls", truth, sub, workers=1).scores for sub in (as_integers, as_decimals)]
    assert scores[0] == scores[1]


def test_task1_warnings_for_extra_guesses_and_labels_outside_the_classes(tmp_path: Path) -> None:
    truth = write_lines(tmp_path / "gt.txt", ["1", "2"])
    code, doc = run_json("ilsvrc2012-cls", truth, write_lines(tmp_path / "sub.txt", ["9 9 9 9 9 1", "2 2 0 1001"]))
    assert code == 0 and doc["scores"]["error@5"] == 0.5  # the sixth guess, 1, is cut
    assert {w["code"] for w in doc["warnings"]} == {"extra_guesses", "label_range"}


def test_task2_rejections_and_missing_xml(tmp_path: Path, meta) -> None:
    code, doc = loc_case(tmp_path, meta, ["7"], [[(7, 0, 0, 9, 9)]], ["7 0 0 9"])
    assert code == 1 and doc["errors"][0]["code"] == "malformed" and "groups of 5" in doc["errors"][0]["message"]
    meta_path, _ = meta
    truth = write_lines(tmp_path / "gt2.txt", ["7", "7"])
    code, output = run(
        "evaluate",
        "ilsvrc2012-loc",
        "--truth",
        str(truth),
        "--submission",
        str(tmp_path / "sub.txt"),
        "--set",
        f"boxes={tmp_path / 'boxes'}",
        "--set",
        f"meta={meta_path}",
    )
    assert code == 2 and "ILSVRC2012_val_00000002.xml" in output


def slow_voc_ap(positive: np.ndarray, scores: np.ndarray) -> float:
    """VOCap.m, line by line: stable sort, precision envelope, stepwise area."""
    order = sorted(range(len(scores)), key=lambda i: -scores[i])  # Python's sort is stable
    tp = fp = 0
    rec, prec = [], []
    for i in order:
        tp += bool(positive[i])
        fp += not positive[i]
        rec.append(tp / positive.sum())
        prec.append(tp / (tp + fp))
    mrec, mpre = [0.0, *rec, 1.0], [0.0, *prec, 0.0]
    for i in range(len(mpre) - 2, -1, -1):
        mpre[i] = max(mpre[i], mpre[i + 1])
    return sum((mrec[i] - mrec[i - 1]) * mpre[i] for i in range(1, len(mrec)) if mrec[i] != mrec[i - 1])


@pytest.mark.parametrize("seed", range(40))
def test_voc_ap_against_the_slow_reference_and_sklearn_mode(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, classes = int(rng.integers(2, 80)), int(rng.integers(1, 6))
    truth = rng.integers(0, classes, n) if seed % 5 else np.zeros(n, np.int64)  # every item a positive of class 0
    scores = np.round(rng.random((n, classes)), int(rng.integers(1, 3)))  # rounding makes ties
    if seed % 8 == 0:
        scores[:] = 0.5  # every confidence tied: item order decides
    positive = truth[:, None] == np.arange(classes)[None, :]
    ours = voc_average_precision(positive, scores)
    theirs = sklearn_average_precision(positive, scores)
    for c in range(classes):
        if positive[:, c].any():
            assert ours[c] == pytest.approx(slow_voc_ap(positive[:, c], scores[:, c]), abs=1e-12)
            assert theirs[c] == pytest.approx(average_precision_score(positive[:, c], scores[:, c]), abs=1e-12)
        else:
            assert np.isnan(ours[c]) and np.isnan(theirs[c])


@pytest.mark.parametrize("seed", range(60))
def test_ranks_are_those_of_the_stable_sort(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 300))
    values = np.round(rng.normal(size=n), int(rng.integers(0, 4)))  # few decimals: long runs of ties
    special = rng.random(n)
    values[special < 0.05] = np.nan
    values[(special >= 0.05) & (special < 0.1)] = 0.0
    values[(special >= 0.1) & (special < 0.15)] = -0.0
    values[(special >= 0.15) & (special < 0.17)] = np.inf
    values[(special >= 0.17) & (special < 0.19)] = -np.inf
    if seed % 10 == 0:
        values[:] = values[0]  # every value tied
    items = np.flatnonzero(rng.random(n) < (1.0 if seed % 7 == 0 else rng.random()))
    rank = np.empty(n, np.int64)
    rank[np.argsort(values, kind="stable")] = np.arange(1, n + 1)
    assert ranks_of(values, items).tolist() == sorted(rank[items].tolist())


def test_task3_end_to_end_and_rejections(tmp_path: Path) -> None:
    truth = write_lines(tmp_path / "gt.txt", [3, 5, 3, 9])
    good = write_lines(tmp_path / "sub.txt", ["0.9 0.1 0.0", "0.2 0.8 0.1", "0.7 0.2 0.1", "0.1 0.1 0.9"])
    code, doc = run_json("ilsvrc2012-fine", truth, good)
    assert code == 0 and doc["scores"]["mean_ap"] == 1.0 and set(doc["scores"]) == {"mean_ap", "ap/3", "ap/5", "ap/9"}
    bad = write_lines(tmp_path / "bad.txt", ["0.9 0.1", "0.2 nan 0.1", "0.7 x 0.1"])
    code, doc = run_json("ilsvrc2012-fine", truth, bad)
    assert code == 1
    assert {(e["code"], e["line"]) for e in doc["errors"]} == {
        ("line_count", None),
        ("columns", 1),
        ("not_finite", 2),
        ("not_a_number", 3),
    }


def test_task3_class_list_and_sklearn_mode(tmp_path: Path) -> None:
    truth = write_lines(tmp_path / "gt.txt", [3, 5, 3])
    classes = write_lines(tmp_path / "classes.txt", [9, 3, 5])  # any order: columns are ascending ids
    sub = write_lines(tmp_path / "sub.txt", ["0.9 0.1 0.0", "0.2 0.8 0.1", "0.7 0.2 0.1"])
    code, doc = run_json("ilsvrc2012-fine", truth, sub, "--set", f"classes={classes}", "--set", "ap=sklearn")
    assert code == 0 and doc["scores"]["ap/9"] is None and doc["scores"]["mean_ap"] == 1.0
    assert any(w["code"] == "no_positive" for w in doc["warnings"])
    write_lines(classes, [3, 3, 5])
    code, output = run(
        "evaluate", "ilsvrc2012-fine", "--truth", str(truth), "--submission", str(sub), "--set", f"classes={classes}"
    )
    assert code == 2 and "repeats a class id" in output
    write_lines(classes, [5, 9])
    code, output = run(
        "evaluate", "ilsvrc2012-fine", "--truth", str(truth), "--submission", str(sub), "--set", f"classes={classes}"
    )
    assert code == 2 and "not in the class list: [3]" in output


def test_huge_numbers_in_the_truth_are_truth_errors_not_crashes(tmp_path: Path, meta) -> None:
    truth = write_lines(tmp_path / "gt.txt", ["123456789012345678901234567890"])
    sub = write_lines(tmp_path / "sub.txt", ["1"])
    code, output = run("evaluate", "ilsvrc2012-cls", "--truth", str(truth), "--submission", str(sub))
    assert code == 2 and "class IDs from 0 to" in output
    truth, sub, *settings = write_loc_case(tmp_path, meta, ["7"], [[(7, 0, 0, 10**30, 9)]], ["7 0 0 9 4"])
    code, output = run("evaluate", "ilsvrc2012-loc", "--truth", str(truth), "--submission", str(sub), *settings)
    assert code == 2 and "box corner out of range" in output


def test_zero_in_a_truth_line_is_padding_as_in_the_kit(tmp_path: Path) -> None:
    truth = write_lines(tmp_path / "gt.txt", ["5 0", "7 9"])
    sub = write_lines(tmp_path / "sub.txt", ["5", "7 9"])
    code, doc = run_json("ilsvrc2012-cls", truth, sub)
    assert code == 0 and doc["scores"]["error@5"] == 0.0  # the kit: 0; counting 0 as a label: 0.25
    truth = write_lines(tmp_path / "gt.txt", ["5 1001", "0 0"])
    code, output = run("evaluate", "ilsvrc2012-cls", "--truth", str(truth), "--submission", str(sub))
    assert code == 2 and "holds only 0" in output
    truth = write_lines(tmp_path / "gt.txt", ["5 1001", "7"])
    code, doc = run_json("ilsvrc2012-cls", truth, sub)
    assert code == 0 and any(w["code"] == "truth_label_range" and w["line"] == 1 for w in doc["warnings"])


def test_decimal_corners_are_used_as_written_and_decided_exactly(tmp_path: Path, meta) -> None:
    # Truth 0..10.9 x 0..9 is 11.9 x 10 = 119 px (the kit uses 10.9; truncating to 10 gives 110).
    # Guess 0..10.9 x 0..4.95: 119 x 5.95 / 2 = exactly half of 119 x 10... inter 70.805, union 119: 141.61 >= 119 right.
    code, doc = loc_case(tmp_path, meta, ["7"], [[(7, 0, 0, "10.9", 9)]], ["7 0 0 10.9 4"])
    assert code == 0 and doc["scores"]["loc_error"] == 0.0  # inter 59.5, union 119: IoU exactly 0.5
    code, doc = loc_case(tmp_path, meta, ["7"], [[(7, 0, 0, "10.9", 9)]], ["7 0 0 10.9 3.99999999999999999"])
    assert doc["scores"]["loc_error"] == 1.0  # just under 0.5, though its float is 4.0
    code, doc = loc_case(tmp_path, meta, ["7"], [[(7, 0, 0, "10.3", 9)]], ["7 0 0 10.3 4"])
    assert doc["scores"]["loc_error"] == 0.0  # 11.3 x 5 = 56.5 of 113: exactly 0.5 (10.3 is not exact in floats)


def test_boxes_archive_headers_fifo_and_bombs_are_truth_errors(tmp_path: Path, meta) -> None:
    import gzip
    import io
    import os
    import tarfile
    import time

    truth, sub, _, _, meta_set, meta_arg = write_loc_case(tmp_path, meta, ["7"], [[(7, 0, 0, 9, 9)]], ["7 0 0 9 4"])
    xml = (tmp_path / "boxes" / "ILSVRC2012_val_00000001.xml").read_bytes()

    def evaluate_with(boxes: Path) -> tuple[int, str, float]:
        start = time.perf_counter()
        code, output = run(
            "evaluate",
            "ilsvrc2012-loc",
            "--truth",
            str(truth),
            "--submission",
            str(sub),
            "--set",
            f"boxes={boxes}",
            meta_set,
            meta_arg,
        )
        return code, output, time.perf_counter() - start

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as archive:
        info = tarfile.TarInfo("val/ILSVRC2012_val_00000001.xml")
        info.size = len(xml)
        archive.addfile(info, io.BytesIO(xml))
    plain = buffer.getvalue()
    (tmp_path / "ok.tar").write_bytes(plain)
    assert evaluate_with(tmp_path / "ok.tar")[0] == 0
    non_octal = plain[:124] + b"0000000009x\0" + plain[136:]
    base256 = plain[:124] + b"\x80" + bytes(7) + len(xml).to_bytes(4, "big") + plain[136:]
    for name, data in (("non_octal.tar", non_octal), ("base256.tar", base256)):
        (tmp_path / name).write_bytes(data)
        code, output, _ = evaluate_with(tmp_path / name)
        assert code in (0, 2) and "internal error" not in output, output
    os.mkfifo(tmp_path / "fifo.tgz")
    code, output, seconds = evaluate_with(tmp_path / "fifo.tgz")
    assert code == 2 and "not a regular file" in output and seconds < 5
    bomb = tmp_path / "bomb.tgz"
    with gzip.open(bomb, "wb", compresslevel=9) as f:
        for _ in range(80):
            f.write(bytes(1 << 20))  # 80 MiB of zeros in a small file: more than one image's boxes can take
    code, output, seconds = evaluate_with(bomb)
    assert code == 2 and "inflates to more than" in output and seconds < 10


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (
            b'<?xml version="1.0"?><!DOCTYPE a [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;&a;">]><annotation>&b;</annotation>',
            "DOCTYPE",
        ),
        (b'<!DOCTYPE a [<!ENTITY x SYSTEM "file:///etc/passwd">]><annotation>&x;</annotation>', "DOCTYPE"),
        (b"<a>" * 100_000 + b"</a>" * 100_000, "not a VOC annotation"),
        (b"<annotation><object><name>n0", "not well-formed XML"),
        (b"<annotation>" + b"<object><name>x" * 20_000, "not well-formed XML"),  # made for backtracking
        (b"<annotation><object><name>&amp;</name></object></annotation>", "not a WNID"),
    ],
)
def test_hostile_box_files_are_named_with_what_is_wrong(tmp_path: Path, meta, content: bytes, fragment: str) -> None:
    import time

    truth, sub, *settings = write_loc_case(tmp_path, meta, ["7"], [[(7, 0, 0, 9, 9)]], ["7 0 0 9 4"])
    (tmp_path / "boxes" / "ILSVRC2012_val_00000001.xml").write_bytes(content)
    start = time.process_time()  # CPU seconds (every thread's): a loaded machine stretches the wall clock, not these
    code, output = run("evaluate", "ilsvrc2012-loc", "--truth", str(truth), "--submission", str(sub), *settings)
    assert code == 2 and fragment in output and "ILSVRC2012_val_00000001.xml" in output, output
    assert "no box file" not in output and time.process_time() - start < 5


def test_a_linked_box_file_is_refused_by_name(tmp_path: Path, meta) -> None:
    truth, sub, *settings = write_loc_case(tmp_path, meta, ["7"], [[(7, 0, 0, 9, 9)]], ["7 0 0 9 4"])
    xml = tmp_path / "boxes" / "ILSVRC2012_val_00000001.xml"
    xml.unlink()
    xml.symlink_to("/etc/passwd")
    code, output = run("evaluate", "ilsvrc2012-loc", "--truth", str(truth), "--submission", str(sub), *settings)
    assert code == 2 and "symbolic link" in output and "ILSVRC2012_val_00000001.xml" in output


def test_the_fine_limit_message_says_boxes(tmp_path: Path) -> None:
    """0.8.5 said "a file for 600 boxs"."""
    from podium.core.issues import IssueLog
    from podium.formats.ilsvrc import read_confidences

    path = tmp_path / "confidences.txt"
    path.write_bytes(b"0.5 " * 300_000)
    log = IssueLog()
    assert read_confidences(path, 600, 3, log) is None
    assert "a file for 600 boxes needs at most" in log.errors[0].message


def test_task1_in_a_new_process_imports_no_more_than_it_needs(tmp_path: Path) -> None:
    """A fresh Task 1 evaluation imports neither numpy.ma (15 ms of CPU) nor ElementTree (Task 2's; 10 ms): issue 40 goal 1."""
    import subprocess
    import sys

    truth, guesses = tmp_path / "truth.txt", tmp_path / "guesses.txt"
    truth.write_text("1\n2\n3\n")
    guesses.write_text("1 5 6 7 8\n9 2 4 5 6\n4 5 6 7 8\n")
    code = (
        "import sys, podium; r = podium.evaluate('ilsvrc2012-cls', *map(__import__('pathlib').Path, sys.argv[1:]), workers=1); "
        "print(r.scores['error@5'], 'numpy.ma' in sys.modules, 'xml.etree.ElementTree' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(truth), str(guesses)], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == [str(1 / 3), "False", "False"]
