"""camera-traps: points against a slow exact-fraction reference; boundary IoU; every rejection."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from conftest import run, run_json

HEADER = "Name\tBBox\tClass\n"


@pytest.fixture(params=["numpy", "compiled"])
def matching(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each way floats decide the matching (:func:`podium.metrics.detection_points.greedy_matching`),
    chosen here rather than by whether a kernel ran before in this process."""
    from podium.metrics import detection_points

    monkeypatch.setattr(detection_points, "_compiled_pays", lambda pred, truth: request.param == "compiled")
    return request.param


def exact_iou(a, b) -> Fraction:
    """The reference's own IoU of (xc, yc, w, h) boxes, in Fractions."""
    ax1, ay1, ax2, ay2 = a[0] - a[2] / 2, a[1] - a[3] / 2, a[0] + a[2] / 2, a[1] + a[3] / 2
    bx1, by1, bx2, by2 = b[0] - b[2] / 2, b[1] - b[3] / 2, b[0] + b[2] / 2, b[1] + b[3] / 2
    inter = max(Fraction(0), min(ax2, bx2) - max(ax1, bx1)) * max(Fraction(0), min(ay2, by2) - max(ay1, by1))
    return inter / (a[2] * a[3] + b[2] * b[3] - inter)


def evaluate(truth: Path, sub: Path, *extra: str) -> tuple[int, dict]:
    return run_json("camera-traps", truth, sub, *extra)


def reference_points(truth_rows, pred_rows) -> tuple[int, int, int]:
    """(detection points, classification points, truth objects), the rules in Fractions."""
    photos = {name for name, _, _ in truth_rows}
    detection = classification = 0
    for photo in photos:
        truths = [(b, c) for n, b, c in truth_rows if n == photo and b is not None]
        preds = [(b, c) for n, b, c in pred_rows if n == photo]
        taken = set()
        for box, cls in preds:
            best, best_iou = None, Fraction(1, 2)
            for k, (tbox, _) in enumerate(truths):
                if k not in taken and (v := exact_iou(box, tbox)) > best_iou:
                    best, best_iou = k, v
            if best is None:
                detection -= 1
            else:
                taken.add(best)
                detection += 1
                classification += 5 if cls == truths[best][1] else -5
        detection -= len(truths) - len(taken)
    return detection, classification, sum(1 for _, b, _ in truth_rows if b is not None)


def grid_box(rng) -> tuple[Fraction, ...]:
    """Coordinates on a 0.05 grid: IoU of exactly 0.5 and exact ties are frequent."""
    w, h = Fraction(int(rng.integers(1, 9)), 20), Fraction(int(rng.integers(1, 9)), 20)
    xc = w / 2 + Fraction(int(rng.integers(0, int((1 - w) * 20) + 1)), 20)
    yc = h / 2 + Fraction(int(rng.integers(0, int((1 - h) * 20) + 1)), 20)
    return (xc, yc, w, h)


def fmt(box) -> str:
    return " ".join(f"{float(v):.4f}".rstrip("0").rstrip(".") for v in box)


def write(path: Path, rows) -> Path:
    lines = [HEADER] + [f"{n}\t{fmt(b) if b is not None else ''}\t{c if b is not None else ''}\n" for n, b, c in rows]
    path.write_text("".join(lines))
    return path


@pytest.mark.parametrize("seed", range(40))
def test_random_cases_match_the_exact_reference(tmp_path: Path, seed: int, matching: str) -> None:
    rng = np.random.default_rng(seed)
    truth_rows, pred_rows = [], []
    for i in range(int(rng.integers(1, 12))):
        name = f"p{i}.jpg"
        boxes = [grid_box(rng) for _ in range(int(rng.integers(0, 5)))]
        truth_rows += [(name, b, int(rng.integers(0, 2))) for b in boxes] or [(name, None, None)]
        for b in boxes:
            if rng.random() < 0.7:
                pred_rows.append((name, b if rng.random() < 0.5 else grid_box(rng), int(rng.integers(0, 2))))
        pred_rows += [(name, grid_box(rng), int(rng.integers(0, 2))) for _ in range(int(rng.integers(0, 3)))]
    rng.shuffle(pred_rows)  # the file order decides the greedy matching
    truth = write(tmp_path / "truth.tsv", truth_rows)
    sub = write(
        tmp_path / "sub.tsv", [(n, tuple(Fraction(fmt(b).split()[k]) for k in range(4)), c) for n, b, c in pred_rows]
    )
    code, doc = evaluate(truth, sub)
    assert code == 0, doc["errors"]
    detection, classification, objects = reference_points(truth_rows, [(n, b, c) for n, b, c in pred_rows])
    assert doc["scores"]["detection_points"] == detection
    assert doc["scores"]["classification_points"] == classification
    assert doc["scores"]["max_points"] == 6 * objects
    expected = max(0, detection + classification) / (6 * objects) if objects else float(not pred_rows)
    assert doc["scores"]["score"] == expected


def test_iou_of_exactly_one_half_is_not_a_match(tmp_path: Path, matching: str) -> None:
    truth = write(
        tmp_path / "t.tsv", [("a.jpg", (Fraction("0.5"), Fraction("0.5"), Fraction("0.4"), Fraction("0.4")), 1)]
    )
    half = (Fraction("0.4"), Fraction("0.5"), Fraction("0.2"), Fraction("0.4"))  # inside, half the area: IoU 1/2
    assert exact_iou(half, (Fraction("0.5"), Fraction("0.5"), Fraction("0.4"), Fraction("0.4"))) == Fraction(1, 2)
    sub = write(tmp_path / "s.tsv", [("a.jpg", half, 1)])
    code, doc = evaluate(truth, sub)
    assert code == 0, doc
    assert (doc["scores"]["detection_points"], doc["details"]["matched"]) == (-2, 0)
    sub = write(
        tmp_path / "s.tsv", [("a.jpg", (Fraction("0.4001"), Fraction("0.5"), Fraction("0.2002"), Fraction("0.4")), 1)]
    )
    _code, doc = evaluate(truth, sub)
    assert doc["details"]["matched"] == 1 and doc["scores"]["score"] == 1.0


def test_float_rounding_cannot_turn_one_half_into_a_match(tmp_path: Path, matching: str) -> None:
    # Decimals whose IoU is exactly 1/2 but computes to 0.5000000000000001 in floats.
    truth_box = (Fraction("0.39"), Fraction("0.12"), Fraction("0.72"), Fraction("0.78"))
    pred_box = (Fraction("0.48"), Fraction("0.07"), Fraction("0.39"), Fraction("0.9"))
    assert exact_iou(pred_box, truth_box) == Fraction(1, 2)
    corners = [
        [float(x - w / 2), float(y - h / 2), float(x + w / 2), float(y + h / 2)] for x, y, w, h in (pred_box, truth_box)
    ]
    (a, b) = np.array(corners)
    inter = (min(a[2], b[2]) - max(a[0], b[0])) * (min(a[3], b[3]) - max(a[1], b[1]))
    assert inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter) > 0.5  # floats are fooled
    truth = write(tmp_path / "t.tsv", [("a.jpg", truth_box, 0)])
    sub = write(tmp_path / "s.tsv", [("a.jpg", pred_box, 0)])
    _code, doc = evaluate(truth, sub)
    assert doc["details"]["matched"] == 0


def write_raw(path: Path, rows: list[tuple[str, str, int]]) -> Path:
    path.write_text(HEADER + "".join(f"{n}\t{box}\t{c}\n" for n, box, c in rows))
    return path


def test_tiny_boxes_at_one_half_are_decided_exactly(tmp_path: Path, matching: str) -> None:
    # The float window around 0.5 must scale with the boxes: here IoU is exactly 1/2.
    truth = write_raw(tmp_path / "t.tsv", [("a.jpg", "0.3 0.3 1e-9 1e-9", 1)])
    sub = write_raw(tmp_path / "s.tsv", [("a.jpg", "0.29999999975 0.3 5e-10 1e-9", 1)])
    assert exact_iou(
        *(tuple(Fraction(v) for v in b.split()) for b in ("0.29999999975 0.3 5e-10 1e-9", "0.3 0.3 1e-9 1e-9"))
    ) == Fraction(1, 2)
    code, doc = evaluate(truth, sub)
    assert code == 0 and doc["scores"]["points"] == -2 and doc["details"]["matched"] == 0
    sub = write_raw(tmp_path / "s.tsv", [("a.jpg", "0.2999999997501 0.3 5.002e-10 1e-9", 1)])  # just above 1/2
    code, doc = evaluate(truth, sub)
    assert doc["scores"]["points"] == 6


def test_sixty_significant_digits_at_one_half(tmp_path: Path, matching: str) -> None:
    # Products of 60-digit coordinates have 120 digits: no fixed decimal precision holds them.
    long = lambda head, tail: head + "0" * 57 + tail
    Y, H, W = long("0.5", "3"), long("0.4", "7"), long("0.4", "4")
    truth_box = f"0.5 {Y} {W} {H}"
    pred_box = f"0.3{'9' * 58} {Y} {long('0.2', '2')} {H}"  # half of the truth's width, inside it
    parsed = [tuple(Fraction(v) for v in b.split()) for b in (pred_box, truth_box)]
    assert exact_iou(*parsed) == Fraction(1, 2)
    truth = write_raw(tmp_path / "t.tsv", [("a.jpg", truth_box, 1)])
    sub = write_raw(tmp_path / "s.tsv", [("a.jpg", pred_box, 1)])
    code, doc = evaluate(truth, sub)
    assert code == 0 and doc["scores"]["points"] == -2


@pytest.mark.parametrize("seed", range(10))
def test_random_tiny_boxes_match_the_exact_reference(tmp_path: Path, seed: int, matching: str) -> None:
    """Grid boxes shrunk to a 1e-9 scale: every IoU near 1/2 or a tie needs exact arithmetic."""
    rng = np.random.default_rng(1000 + seed)
    scale, offset = Fraction(1, 10**9), Fraction(3, 10)
    shrink = lambda b: (offset + b[0] * scale, offset + b[1] * scale, b[2] * scale, b[3] * scale)
    truth_rows = [("a.jpg", shrink(grid_box(rng)), int(rng.integers(0, 2))) for _ in range(4)]
    pred_rows = [
        ("a.jpg", shrink(grid_box(rng)) if rng.random() < 0.5 else b, int(rng.integers(0, 2))) for _, b, _ in truth_rows
    ]
    text = lambda b: " ".join(f"{float(v):.20f}".rstrip("0") for v in b)
    truth = write_raw(tmp_path / "t.tsv", [(n, text(b), c) for n, b, c in truth_rows])
    sub = write_raw(tmp_path / "s.tsv", [(n, text(b), c) for n, b, c in pred_rows])
    as_written = lambda rows: [(n, tuple(Fraction(v) for v in text(b).split()), c) for n, b, c in rows]
    code, doc = evaluate(truth, sub)
    assert code == 0, doc["errors"]
    detection, classification, _ = reference_points(as_written(truth_rows), as_written(pred_rows))
    assert (doc["scores"]["detection_points"], doc["scores"]["classification_points"]) == (detection, classification)


def test_duplicated_boxes_are_decided_exactly_once(monkeypatch: pytest.MonkeyPatch, matching: str) -> None:
    """A truth that repeats its boxes ties every IoU, so those photos go to exact arithmetic; boxes
    written alike are computed once there (a hostile truth of 100,000 such rows took 7 s, 1.5 s now)."""
    from podium.metrics import detection_points

    calls = []
    monkeypatch.setattr(detection_points, "exact_iou", lambda a, b: calls.append(1) or Fraction(2, 3))
    rows = [(photo, 0.5, 0.5, 0.2, 0.2, 0) for photo in range(3) for _ in range(40)]
    truth = detection_points.Boxes.from_rows(rows)
    pred = detection_points.Boxes.from_rows([(photo, 0.5, 0.5, 0.2, 0.2, 0) for photo in range(3) for _ in range(5)])
    matching = detection_points.greedy_matching(pred, truth)
    assert matching.exact_photos == 3 and len(calls) == 1  # one text pair in 600 exact comparisons
    assert sorted(matching.truth_of.tolist()) == [
        0,
        1,
        2,
        3,
        4,
        40,
        41,
        42,
        43,
        44,
        80,
        81,
        82,
        83,
        84,
    ]  # the earlier truths, in order


def test_order_matters_and_optimal_is_only_a_check(tmp_path: Path, matching: str) -> None:
    t1 = (Fraction("0.3"), Fraction("0.5"), Fraction("0.4"), Fraction("0.4"))
    t2 = (Fraction("0.5"), Fraction("0.5"), Fraction("0.4"), Fraction("0.4"))
    p_both = (Fraction("0.4"), Fraction("0.5"), Fraction("0.4"), Fraction("0.4"))  # IoU 0.6 with each
    truth = write(tmp_path / "t.tsv", [("a.jpg", t1, 1), ("a.jpg", t2, 1)])
    sub = write(tmp_path / "s.tsv", [("a.jpg", p_both, 1), ("a.jpg", t1, 1)])  # greedy: first takes t1 (tie -> earlier)
    code, doc = evaluate(truth, sub)
    assert code == 0, doc
    assert doc["details"]["matched"] == 1 and doc["details"]["photos_contested"] == 1
    # greedy: +1 +5 for the first, -1 for the second (t1 taken), -1 for t2 missed = 4; optimal: 12
    _code, doc = evaluate(truth, sub, "--set", "matching=optimal")
    assert doc["details"]["matched"] == 2 and doc["scores"]["score"] == 1.0
    assert (doc["details"]["greedy_points"], doc["details"]["points_order_dependent"]) == (4, 8)
    assert any(w["code"] == "order_dependent" for w in doc["warnings"])


def test_empty_photos_and_no_truth_objects(tmp_path: Path) -> None:
    truth = write(tmp_path / "t.tsv", [("a.jpg", None, None), ("b.jpg", None, None)])
    sub = write(tmp_path / "s.tsv", [])
    code, doc = evaluate(truth, sub)
    assert code == 0, doc
    assert doc["scores"]["score"] == 1.0 and doc["scores"]["points"] == 0
    sub = write(tmp_path / "s.tsv", [("b.jpg", (Fraction("0.5"),) * 2 + (Fraction("0.1"),) * 2, 0)])
    _code, doc = evaluate(truth, sub)
    assert doc["scores"]["score"] == 0.0 and doc["scores"]["points"] == -1


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        ("x.jpg\t0.5 0.5 0.1 0.1\t1", "'x.jpg' is not in the test set"),
        ("a.jpg\t0.5 0.5 1.2 0.1\t1", "outside [0, 1]"),
        ("a.jpg\t0.5 0.5 0 0.1\t1", "not positive"),
        ("a.jpg\t0.5 nan 0.1 0.1\t1", "NaN or infinity"),
        ("a.jpg\t0.5 inf 0.1 0.1\t1", "NaN or infinity"),
        ("a.jpg\t0.5 0.5 0.1 0.1\t2", "must be 0 or 1"),
        ("a.jpg\t0.5 0.5 0.1\t1", "four numbers"),
        ("a.jpg\t0.5 0.5 0.1 0.1", "expected 3 columns"),
        ("a.jpg\t0.5 0.5 abc 0.1\t1", "not a number"),
    ],
)
def test_rejections_with_line_numbers(tmp_path: Path, line: str, fragment: str) -> None:
    truth = write(tmp_path / "t.tsv", [("a.jpg", (Fraction("0.5"),) * 2 + (Fraction("0.2"),) * 2, 1)])
    (tmp_path / "s.tsv").write_text(HEADER + "a.jpg\t0.5 0.5 0.2 0.2\t1\n" + line + "\n")
    code, doc = evaluate(truth, tmp_path / "s.tsv")
    assert code == 1, doc
    (error,) = doc["errors"]
    assert fragment in error["message"] and error["line"] == 3


def test_empty_row_in_a_submission_is_no_detection(tmp_path: Path) -> None:
    truth = write(tmp_path / "t.tsv", [("a.jpg", None, None)])
    (tmp_path / "s.tsv").write_text(HEADER + "a.jpg\t\t\n")
    code, doc = evaluate(truth, tmp_path / "s.tsv")
    assert code == 0 and doc["scores"]["score"] == 1.0


def test_tolerated_forms(tmp_path: Path) -> None:
    truth = write(tmp_path / "t.tsv", [("a.jpg", (Fraction("0.5"),) * 2 + (Fraction("0.2"),) * 2, 1)])
    for text in (
        'Name,BBox,Class\na.jpg,"[0.5, 0.5, 0.2, 0.2]",True\n',
        "Name;BBox;Class\na.jpg;(0.5 0.5 0.2 0.2);1\n",
        "name\txc\tyc\tw\th\tclass\na.jpg\t0.5\t0.5\t0.2\t0.2\ttrue\n",
        "\ufeffName\tBBox\tClass\r\na.jpg\t'0.5,0.5,0.2,0.2'\t1\r\n",
    ):
        (tmp_path / "s.csv").write_text(text)
        code, doc = evaluate(truth, tmp_path / "s.csv")
        assert code == 0 and doc["scores"]["score"] == 1.0, (text, doc["errors"])


def test_box_outside_the_frame_is_a_warning(tmp_path: Path) -> None:
    truth = write(
        tmp_path / "t.tsv", [("a.jpg", (Fraction("0.05"), Fraction("0.5"), Fraction("0.2"), Fraction("0.2")), 1)]
    )
    code, doc = evaluate(truth, truth)
    assert code == 0 and doc["warnings"][0]["code"] == "outside_frame" and doc["scores"]["score"] == 1.0


def test_bad_header_and_truth_errors(tmp_path: Path) -> None:
    truth = write(tmp_path / "t.tsv", [("a.jpg", None, None)])
    (tmp_path / "s.tsv").write_text("photo\tbox\tlabel\n")
    code, doc = evaluate(truth, tmp_path / "s.tsv")
    assert code == 1 and doc["errors"][0]["code"] == "header" and doc["errors"][0]["line"] == 1
    (tmp_path / "bad.tsv").write_text(HEADER + "a.jpg\t0.5 0.5 0.2\t1\n")
    code, output = run(
        "evaluate", "camera-traps", "--truth", str(tmp_path / "bad.tsv"), "--submission", str(tmp_path / "s.tsv")
    )
    assert code == 2 and "four numbers" in output


def test_min_size_check_of_the_truth(tmp_path: Path) -> None:
    (tmp_path / "img").mkdir()
    Image.new("RGB", (1000, 500)).save(tmp_path / "img" / "a.jpg")
    truth = write(
        tmp_path / "t.tsv", [("a.jpg", (Fraction("0.5"), Fraction("0.5"), Fraction("0.1"), Fraction("0.5")), 1)]
    )
    code, doc = evaluate(truth, truth, "--set", f"images={tmp_path / 'img'}")
    assert code == 0, doc
    assert any(w["code"] == "small_suitable" for w in doc["warnings"])  # 100 px wide < 128
    _code, doc = evaluate(truth, truth, "--set", f"images={tmp_path / 'img'}", "--set", "min_size=100")
    assert not any(w["code"] == "small_suitable" for w in doc["warnings"])


def test_images_setting_must_be_a_folder(tmp_path: Path) -> None:
    truth = write(tmp_path / "t.tsv", [("a.jpg", None, None)])
    code, output = run(
        "evaluate",
        "camera-traps",
        "--truth",
        str(truth),
        "--submission",
        str(truth),
        "--set",
        f"images={tmp_path / 'nope'}",
    )
    assert code == 2 and "must be a folder of the test photos" in output


def test_per_photo_details_compute_each_points_array_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A regression of podium 0.6: the details read ``photos.points[i]`` per photo, which recomputed the
    whole array each time, so 100,000 photos took 27 s instead of 2 s."""
    from podium.challenges.camera_traps import _per_photo
    from podium.metrics.detection_points import PointCounts

    calls = []
    plain = PointCounts.detection_points.fget
    monkeypatch.setattr(PointCounts, "detection_points", property(lambda self: calls.append(1) or plain(self)))  # type: ignore[misc]
    n = 1000
    ones = np.ones(n, dtype=np.int64)
    photos = PointCounts(
        matched=ones,
        false_detections=0 * ones,
        missed=0 * ones,
        class_right=ones,
        class_wrong=0 * ones,
        truth_objects=ones,
        predictions=ones,
    )
    details = _per_photo(photos, [f"p{i}" for i in range(n)])
    assert len(details) == n and details["p7"] == {"points": 6, "matched": 1, "false": 0, "missed": 0}
    assert len(calls) == 1
