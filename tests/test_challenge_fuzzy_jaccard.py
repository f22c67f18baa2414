"""fuzzy-jaccard end to end: truth layouts, submissions, rejections, the CLI contract."""

from __future__ import annotations

import os
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from conftest import run, run_json, save_png
from podium.scoring.engine import evaluate
from test_metric_fuzzy_jaccard import SEED_PREDICTION, SEED_TRUTH

CLASSES = ("car", "tree")


def evaluate_json(truth: Path, submission: Path, *extra: str) -> tuple[int, dict]:
    return run_json("fuzzy-jaccard", truth, submission, *extra)


def write_label_truth(root: Path, images: dict[str, np.ndarray], classes=CLASSES) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "classes.txt").write_text("\n".join(classes) + "\n")
    for stem, labels in images.items():
        save_png(root / f"{stem}.png", labels)
    return root


def write_submission(root: Path, predictions: dict[str, list[np.ndarray | None]], classes=CLASSES) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for stem, maps in predictions.items():
        for name, pixels in zip(classes, maps):
            if pixels is not None:
                save_png(root / name / f"{stem}.png", pixels)
    return root


def random_case(tmp_path: Path, seed: int, n_images: int = 3):
    rng = np.random.default_rng(seed)
    images, predictions = {}, {}
    for i in range(n_images):
        shape = tuple(int(v) for v in rng.integers(3, 20, size=2))
        images[f"img{i}"] = rng.integers(0, len(CLASSES) + 1, size=shape).astype(np.uint8)
        predictions[f"img{i}"] = [
            None if rng.random() < 0.15 else rng.integers(0, 101, size=shape).astype(np.uint8) for _ in CLASSES
        ]
    return (
        write_label_truth(tmp_path / "truth", images),
        write_submission(tmp_path / "sub", predictions),
        images,
        predictions,
    )


def reference_scores(images, predictions, roi="union", ignore=None):
    """Σ min / Σ max per class straight from the rules, pixel by pixel."""
    inter = [0] * len(CLASSES)
    union = [0] * len(CLASSES)
    for stem, labels in images.items():
        for c in range(len(CLASSES)):
            for (y, x), label in np.ndenumerate(labels):
                if label == ignore or (roi == "union" and label == 0):
                    continue
                g = 100 if label == c + 1 else 0
                p = 0 if predictions[stem][c] is None else int(predictions[stem][c][y, x])
                inter[c] += min(p, g)
                union[c] += max(p, g)
    per_class = [float(Fraction(i, u)) for i, u in zip(inter, union)]
    return per_class, float(np.mean(per_class))


# --- the seed's worked example, in both truth layouts --------------------------------------------


def test_seed_example_with_class_masks(tmp_path: Path) -> None:
    save_png(tmp_path / "truth" / "cross" / "ex.png", SEED_TRUTH.astype(np.uint8))
    save_png(tmp_path / "sub" / "cross" / "ex.png", SEED_PREDICTION.astype(np.uint8))
    code, doc = evaluate_json(tmp_path / "truth", tmp_path / "sub", "--set", "roi=all")
    assert code == 0
    assert doc["scores"]["fuzzy_jaccard"] == pytest.approx(860 / 930, abs=1e-15)
    assert doc["details"]["classes"]["cross"] == {"intersection": 860, "union": 930}
    code, doc = evaluate_json(tmp_path / "truth", tmp_path / "sub")  # background excluded (the rules)
    assert doc["scores"]["fuzzy_jaccard/cross"] == pytest.approx(860 / 900, abs=1e-15)


def test_seed_example_with_label_image(tmp_path: Path) -> None:
    truth = write_label_truth(tmp_path / "truth", {"ex": (SEED_TRUTH // 100).astype(np.uint8)}, classes=("cross",))
    sub = write_submission(tmp_path / "sub", {"ex": [SEED_PREDICTION.astype(np.uint8)]}, classes=("cross",))
    code, doc = evaluate_json(truth, sub, "--set", "roi=all")
    assert code == 0
    assert doc["scores"]["fuzzy_jaccard"] == pytest.approx(0.924731182795699, abs=1e-15)


# --- random sets against the reference ----------------------------------------------------------


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("roi", ["union", "all"])
def test_random_sets_match_reference(tmp_path: Path, seed: int, roi: str) -> None:
    truth, sub, images, predictions = random_case(tmp_path, seed)
    result = evaluate("fuzzy-jaccard", truth, sub, {"roi": roi})
    per_class, mean = reference_scores(images, predictions, roi=roi)
    assert result.status == "scored"
    assert result.scores["fuzzy_jaccard"] == pytest.approx(mean, abs=1e-14)
    for name, value in zip(CLASSES, per_class):
        assert result.scores[f"fuzzy_jaccard/{name}"] == pytest.approx(value, abs=1e-15)


def test_ignore_label_is_outside_the_roi(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    images = {"a": rng.choice([0, 1, 2, 255], size=(11, 13)).astype(np.uint8)}
    predictions = {"a": [rng.integers(0, 101, size=(11, 13)).astype(np.uint8) for _ in CLASSES]}
    truth = write_label_truth(tmp_path / "truth", images)
    sub = write_submission(tmp_path / "sub", predictions)
    for roi in ("union", "all"):
        result = evaluate("fuzzy-jaccard", truth, sub, {"ignore": "255", "roi": roi})
        assert result.scores["fuzzy_jaccard"] == pytest.approx(
            reference_scores(images, predictions, roi, 255)[1], abs=1e-14
        )
    code, output = run("evaluate", "fuzzy-jaccard", "--truth", str(truth), "--submission", str(sub))
    assert code == 2 and "255" in output  # without ignore=255, 255 names no class


def test_workers_and_image_order_do_not_change_the_score(tmp_path: Path, pool_always: None) -> None:
    truth, sub, images, predictions = random_case(tmp_path / "one", 5, n_images=9)
    # The same images under other names, so that they are listed in another order.
    renamed = {f"z{8 - int(k[3:])}": v for k, v in images.items()}
    renamed_predictions = {f"z{8 - int(k[3:])}": v for k, v in predictions.items()}
    truth2 = write_label_truth(tmp_path / "two" / "truth", renamed)
    sub2 = write_submission(tmp_path / "two" / "sub", renamed_predictions)
    one = evaluate("fuzzy-jaccard", truth, sub, workers=1)
    two = evaluate("fuzzy-jaccard", truth, sub, workers=2)
    reordered = evaluate("fuzzy-jaccard", truth2, sub2, workers=2)
    assert one.scores == two.scores == reordered.scores
    assert one.details == two.details


def test_palette_and_16_bit_truth_labels(tmp_path: Path) -> None:
    labels = np.array([[0, 1, 2], [2, 1, 0]], dtype=np.uint8)
    prediction = [np.full((2, 3), 60, np.uint8), np.full((2, 3), 30, np.uint8)]
    write_label_truth(tmp_path / "plain", {"a": labels})
    root = tmp_path / "palette"
    write_label_truth(root, {})
    Image.fromarray(labels, mode="L").convert("P").save(root / "a.png")
    assert Image.open(root / "a.png").mode == "P"
    write_label_truth(tmp_path / "sixteen", {"a": labels.astype(np.uint16)})
    sub = write_submission(tmp_path / "sub", {"a": prediction})
    scores = [evaluate("fuzzy-jaccard", tmp_path / name, sub).scores for name in ("plain", "palette", "sixteen")]
    assert scores[0] == scores[1] == scores[2]


# --- submission problems ------------------------------------------------------------------------


@pytest.fixture
def good(tmp_path: Path):
    images = {"a": np.array([[0, 1, 2, 1]] * 4, np.uint8), "b": np.array([[2, 2, 0, 1]] * 4, np.uint8)}
    predictions = {stem: [np.full((4, 4), 50, np.uint8)] * 2 for stem in images}
    return write_label_truth(tmp_path / "truth", images), write_submission(tmp_path / "sub", predictions)


def expect_rejected(truth: Path, sub: Path, code_name: str, *fragments: str) -> dict:
    code, doc = evaluate_json(truth, sub)
    assert code == 1, doc
    assert doc["status"] == "rejected" and doc["scores"] == {}
    matching = [e for e in doc["errors"] if e["code"] == code_name]
    assert matching, doc["errors"]
    for fragment in fragments:
        assert any(fragment in e["message"] for e in matching), (fragment, matching)
    return doc


def test_value_above_100(good) -> None:
    truth, sub = good
    bad = np.full((4, 4), 50, np.uint8)
    bad[2, 3] = 101
    save_png(sub / "car" / "a.png", bad)
    doc = expect_rejected(truth, sub, "bad_image", "1 value above 100", "row 2, column 3")
    assert doc["errors"][0]["file"].endswith(os.path.join("car", "a.png"))


def test_size_mismatch(good) -> None:
    truth, sub = good
    save_png(sub / "car" / "a.png", np.zeros((4, 5), np.uint8))
    expect_rejected(truth, sub, "bad_image", "is 5x4, but the truth image is 4x4")


@pytest.mark.parametrize(
    ("mode", "fragment"),
    [("RGB", "3 channels"), ("LA", "2 channels"), ("RGBA", "4 channels"), ("P", "palette")],
)
def test_more_than_one_channel_or_palette(good, mode: str, fragment: str) -> None:
    truth, sub = good
    save_png(sub / "tree" / "b.png", np.zeros((4, 4), np.uint8), mode=mode)
    expect_rejected(truth, sub, "bad_image", fragment)


def test_grayscale_with_transparency_is_read_as_its_gray_values(good) -> None:
    truth, sub = good
    Image.fromarray(np.full((4, 4), 50, np.uint8)).save(sub / "tree" / "b.png", format="PNG", transparency=50)
    assert b"tRNS" in (sub / "tree" / "b.png").read_bytes()
    code, doc = evaluate_json(truth, sub)
    assert code == 0, doc["errors"]


def test_submission_one_folder_down_gets_a_hint(good) -> None:
    truth, sub = good
    inner = sub / "sub"
    inner.mkdir()
    for folder in [p for p in sub.iterdir() if p.name != "sub"]:
        folder.rename(inner / folder.name)
    doc = expect_rejected(truth, sub, "one_level_down", "seem to be one level down, in sub/sub")
    assert doc["errors"][0]["file"] == str(sub)


def test_16_bit_data(good) -> None:
    truth, sub = good
    save_png(sub / "tree" / "b.png", np.zeros((4, 4), np.uint16))
    expect_rejected(truth, sub, "bad_image", "is 16-bit")


def test_float_data_in_a_tiff_named_png(good) -> None:
    truth, sub = good
    Image.fromarray(np.zeros((4, 4), np.float32)).save(sub / "tree" / "b.png", format="TIFF")
    expect_rejected(truth, sub, "bad_image", "is a TIFF file, not a PNG")


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (b"", "is empty"),
        (b"hello world", "is not a PNG file"),
        (b"\xff\xd8\xff\xe0JFIF", "is a JPEG file"),
        (b"\x89PNG\r\n\x1a\n" + b"\x00" * 40, "no IHDR"),
    ],
)
def test_files_that_do_not_decode(good, content: bytes, fragment: str) -> None:
    truth, sub = good
    (sub / "car" / "b.png").write_bytes(content)
    expect_rejected(truth, sub, "bad_image", fragment)


def test_truncated_png(good) -> None:
    truth, sub = good
    rng = np.random.default_rng(0)
    path = save_png(sub / "car" / "b.png", rng.integers(0, 101, (4, 4)).astype(np.uint8))
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 20])
    expect_rejected(truth, sub, "bad_image", "does not decode")


def test_file_far_larger_than_the_image_can_need(good) -> None:
    truth, sub = good
    path = sub / "car" / "b.png"
    path.write_bytes(path.read_bytes() + b"\x00" * (2 << 20))
    expect_rejected(truth, sub, "bad_image", "a file for an image of the expected size needs at most")


def test_folder_that_is_not_a_class(good) -> None:
    truth, sub = good
    (sub / "care").mkdir()
    expect_rejected(truth, sub, "unknown_class", "'care' is not a class", "did you mean 'car'?")


def test_symlink_is_refused_not_followed(good, tmp_path: Path) -> None:
    truth, sub = good
    outside = save_png(tmp_path / "outside.png", np.zeros((4, 4), np.uint8))
    (sub / "car" / "a.png").unlink()
    (sub / "car" / "a.png").symlink_to(outside)
    expect_rejected(truth, sub, "not_a_file", "symbolic link")


def test_fifo_is_refused_without_blocking(good) -> None:
    truth, sub = good
    (sub / "car" / "a.png").unlink()
    os.mkfifo(sub / "car" / "a.png")
    expect_rejected(truth, sub, "not_a_file", "not a regular file")


def test_every_problem_is_listed(good) -> None:
    truth, sub = good
    save_png(sub / "car" / "a.png", np.full((4, 4), 200, np.uint8))
    save_png(sub / "tree" / "b.png", np.zeros((3, 3), np.uint8))
    (sub / "sky").mkdir()
    code, doc = evaluate_json(truth, sub)
    assert code == 1
    assert sorted(e["code"] for e in doc["errors"]) == ["bad_image", "bad_image", "unknown_class"]


def test_many_problems_are_capped_with_a_count(tmp_path: Path) -> None:
    images = {f"i{k:03d}": np.ones((2, 2), np.uint8) for k in range(60)}
    truth = write_label_truth(tmp_path / "truth", images)
    sub = write_submission(tmp_path / "sub", {s: [np.full((2, 2), 255, np.uint8), None] for s in images})
    code, doc = evaluate_json(truth, sub)
    assert code == 1
    assert len(doc["errors"]) == 51
    assert doc["errors"][-1]["code"] == "more_errors"
    assert doc["errors"][-1]["message"] == "10 more errors not listed"


def test_missing_images_are_zeros_with_one_warning(good) -> None:
    truth, sub = good
    (sub / "tree" / "a.png").unlink()
    code, doc = evaluate_json(truth, sub)
    assert code == 0
    warnings = [w for w in doc["warnings"] if w["code"] == "missing_images"]
    assert len(warnings) == 1 and "tree/a.png" in warnings[0]["message"]
    # The missing map scores as all zeros.
    labels = {"a": np.array([[0, 1, 2, 1]] * 4), "b": np.array([[2, 2, 0, 1]] * 4)}
    predictions = {"a": [np.full((4, 4), 50), None], "b": [np.full((4, 4), 50)] * 2}
    _per_class, mean = reference_scores(labels, predictions)
    assert doc["scores"]["fuzzy_jaccard"] == pytest.approx(mean, abs=1e-15)


def test_extra_files_are_a_warning(good) -> None:
    truth, sub = good
    (sub / "README.txt").write_text("hi")
    save_png(sub / "car" / "c.png", np.zeros((4, 4), np.uint8))
    code, doc = evaluate_json(truth, sub)
    assert code == 0
    (warning,) = [w for w in doc["warnings"] if w["code"] == "extra_files"]
    assert "README.txt" in warning["message"] and "car/c.png" in warning["message"]


def test_undefined_class_is_null_with_a_warning(tmp_path: Path) -> None:
    truth = write_label_truth(tmp_path / "truth", {"a": np.ones((3, 3), np.uint8)})
    sub = write_submission(tmp_path / "sub", {"a": [np.full((3, 3), 100, np.uint8), np.zeros((3, 3), np.uint8)]})
    code, doc = evaluate_json(truth, sub)
    assert code == 0
    assert doc["scores"] == {"fuzzy_jaccard": 1.0, "fuzzy_jaccard/car": 1.0, "fuzzy_jaccard/tree": None}
    assert any(w["code"] == "undefined_class" for w in doc["warnings"])


# --- truth problems: exit 2 ---------------------------------------------------------------------


def truth_error(truth: Path, sub: Path, *fragments: str) -> None:
    code, output = run("evaluate", "fuzzy-jaccard", "--truth", str(truth), "--submission", str(sub), "--workers", "1")
    assert code == 2, output
    assert "Traceback" not in output
    for fragment in fragments:
        assert fragment in output, output


def test_truth_without_classes(tmp_path: Path) -> None:
    (tmp_path / "truth").mkdir()
    (tmp_path / "sub").mkdir()
    truth_error(tmp_path / "truth", tmp_path / "sub", "neither classes.txt nor class folders")


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "names no class"),
        ("car\n\ntree\n", "is empty"),
        ("car\ncar\n", "repeats"),
        ("a/b\n", "cannot be a folder name"),
    ],
)
def test_bad_classes_file(tmp_path: Path, text: str, fragment: str) -> None:
    truth = write_label_truth(tmp_path / "truth", {"a": np.zeros((2, 2), np.uint8)})
    (truth / "classes.txt").write_text(text)
    truth_error(truth, tmp_path, fragment)


def test_truth_label_naming_no_class(good) -> None:
    truth, sub = good
    save_png(truth / "a.png", np.full((4, 4), 7, np.uint8))
    truth_error(truth, sub, "label values 7", "a.png")


def test_unreadable_truth_image(good) -> None:
    truth, sub = good
    (truth / "b.png").write_bytes(b"junk")
    truth_error(truth, sub, "b.png", "is not a PNG file")


def test_mask_layout_problems(tmp_path: Path) -> None:
    save_png(tmp_path / "truth" / "car" / "a.png", np.zeros((2, 2), np.uint8))
    save_png(tmp_path / "truth" / "car" / "b.png", np.full((2, 2), 255, np.uint8))
    save_png(tmp_path / "truth" / "tree" / "a.png", np.zeros((2, 2), np.uint8))
    (tmp_path / "sub").mkdir()
    truth_error(tmp_path / "truth", tmp_path / "sub", "has no mask for b")
    save_png(tmp_path / "truth" / "tree" / "b.png", np.zeros((2, 2), np.uint8))
    truth_error(tmp_path / "truth", tmp_path / "sub", "holds values 255", "masks hold only 0 and 100")


def test_ignore_is_refused_where_it_cannot_apply(good, tmp_path: Path) -> None:
    truth, sub = good
    code, output = run(
        "evaluate", "fuzzy-jaccard", "--truth", str(truth), "--submission", str(sub), "--set", "ignore=2"
    )
    assert code == 2 and "ignore=2 is the label of class 'tree'" in output
    save_png(tmp_path / "masks" / "car" / "a.png", np.zeros((2, 2), np.uint8))
    code, output = run(
        "evaluate", "fuzzy-jaccard", "--truth", str(tmp_path / "masks"), "--submission", str(sub), "--set", "ignore=255"
    )
    assert code == 2 and "ignore applies to a truth of label images" in output


def test_a_huge_class_list_is_a_truth_error_read_within_bounds(good) -> None:
    truth, sub = good
    (truth / "classes.txt").write_text("car\ntree\n" + "car\n" * 2_000_000)  # 8 MB of repeated names
    code, output = run("evaluate", "fuzzy-jaccard", "--truth", str(truth), "--submission", str(sub))
    assert code == 2 and "needs at most" in output and "65,535 classes" in output
