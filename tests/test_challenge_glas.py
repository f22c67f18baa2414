"""glas end to end: formats, pairing, binary masks, parts, rejections, the fixture."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from conftest import run, run_json, save_png
from podium.metrics.object_segmentation import image_stats
from test_metric_object_segmentation import OFFICIAL


def evaluate(truth: Path, sub: Path, *extra: str) -> tuple[int, dict]:
    return run_json("glas", truth, sub, *extra)


def glands(shape=(20, 30), labels=(1, 2)) -> np.ndarray:
    img = np.zeros(shape, dtype=np.int64)
    img[2:8, 2:10] = labels[0]
    img[8:15, 2:10] = labels[1]  # touching the first: never merged
    return img


@pytest.fixture
def pair(tmp_path: Path):
    truth = glands()
    save_png(tmp_path / "truth" / "testA_1_anno.png", truth.astype(np.uint8))
    save_png(tmp_path / "truth" / "testB_1_anno.png", truth.astype(np.uint8))
    save_png(tmp_path / "sub" / "testA_1_seg.png", truth.astype(np.uint8))
    save_png(tmp_path / "sub" / "testB_1_seg.png", truth.astype(np.uint8))
    return tmp_path / "truth", tmp_path / "sub"


def test_fixture_per_image_values_and_pooled_scores(shared) -> None:
    folder = shared / "data" / "glas-fixture"
    code, doc = evaluate(folder / "truth", folder / "submission")
    assert code == 0
    for index, (tp, fp, fn, f1, dice, haus) in OFFICIAL.items():
        image = doc["details"]["per_image"][f"testA_{index}"]
        assert (image["tp"], image["fp"], image["fn"]) == (tp, fp, fn)
        assert image["f1"] == pytest.approx(f1, abs=5e-7)
        assert image["object_dice"] == pytest.approx(dice, abs=5e-7)
        assert image["object_hausdorff"] == pytest.approx(haus, abs=5e-7)
    assert (doc["details"]["tp"], doc["details"]["fp"], doc["details"]["fn"]) == (15, 0, 4)
    assert doc["scores"]["f1"] == pytest.approx(30 / 34, abs=1e-15)


def test_formats_and_label_depths_all_pair_by_stem(tmp_path: Path) -> None:
    truth = glands(labels=(300, 70000))
    seg = glands(labels=(5, 9))
    (tmp_path / "t").mkdir()
    (tmp_path / "s").mkdir()
    Image.fromarray(truth.astype(np.int32)).save(tmp_path / "t" / "a_anno.tif")  # 32-bit labels
    Image.fromarray(truth.astype(np.uint16) // 300).save(tmp_path / "t" / "b_anno.png")  # 16-bit
    Image.fromarray(glands().astype(np.uint8)).convert("P").save(tmp_path / "t" / "c_anno.bmp")  # palette BMP
    Image.fromarray(seg.astype(np.uint8)).save(tmp_path / "s" / "a_seg.bmp")
    Image.fromarray(seg.astype(np.uint16)).save(tmp_path / "s" / "b_pred.tiff")
    Image.fromarray(seg.astype(np.uint8)).save(tmp_path / "s" / "c_mask.png")
    code, doc = evaluate(tmp_path / "t", tmp_path / "s")
    assert code == 0, doc["errors"]
    assert (
        doc["scores"]["f1"] == 1.0 and doc["scores"]["object_dice"] == 1.0 and doc["scores"]["object_hausdorff"] == 0.0
    )
    assert set(doc["details"]["per_image"]) == {"a", "b", "c"}


def test_labels_above_255_are_never_cast_to_8_bits(tmp_path: Path) -> None:
    truth = np.zeros((10, 10), np.uint16)
    truth[:, :5], truth[:, 5:] = 256, 512  # both 0 modulo 256
    save_png(tmp_path / "t" / "x.png", truth)
    save_png(tmp_path / "s" / "x.png", truth)
    _code, doc = evaluate(tmp_path / "t", tmp_path / "s")
    assert doc["details"]["tp"] == 2


def test_binary_mask_is_labelled_with_a_warning(tmp_path: Path) -> None:
    truth = np.zeros((12, 12), np.uint8)
    truth[1:4, 1:4], truth[7:10, 7:10] = 1, 2
    save_png(tmp_path / "t" / "x.png", truth)
    save_png(tmp_path / "s" / "x.png", (truth > 0).astype(np.uint8) * 255)
    code, doc = evaluate(tmp_path / "t", tmp_path / "s")
    assert code == 0, doc
    assert doc["details"]["tp"] == 2 and doc["warnings"][0]["code"] == "binary_mask"
    _code, doc = evaluate(tmp_path / "t", tmp_path / "s", "--set", "binary=objects")
    assert (doc["details"]["tp"], doc["details"]["fp"], doc["details"]["fn"]) == (1, 0, 1) and not doc["warnings"]


def test_diagonal_pieces_are_one_object_when_8_connected(tmp_path: Path) -> None:
    seg = np.zeros((6, 6), np.uint8)
    seg[1, 1] = seg[2, 2] = 1  # touch at a corner: one 8-connected object
    save_png(tmp_path / "t" / "x.png", seg)
    save_png(tmp_path / "s" / "x.png", seg)
    _code, doc = evaluate(tmp_path / "t", tmp_path / "s")
    assert doc["details"]["fp"] == 0 and not doc["warnings"]


def test_missing_image_is_an_empty_prediction(pair) -> None:
    truth, sub = pair
    (sub / "testB_1_seg.png").unlink()
    code, doc = evaluate(truth, sub)
    assert code == 0 and any(w["code"] == "missing_images" for w in doc["warnings"])
    assert doc["details"]["per_image"]["testB_1"]["fn"] == 2
    diagonal = math.hypot(20, 30)
    assert doc["details"]["per_image"]["testB_1"]["object_hausdorff"] == pytest.approx(diagonal)
    code, doc = evaluate(truth, sub, "--set", "empty_hausdorff=inf")
    assert doc["scores"]["object_hausdorff"] is None and any(w["code"] == "infinite_hausdorff" for w in doc["warnings"])


def test_parts_add_scores_per_part(pair) -> None:
    truth, sub = pair
    save_png(sub / "testB_1_seg.png", np.zeros((20, 30), np.uint8))
    _code, doc = evaluate(truth, sub, "--set", "parts=testA,testB")
    assert doc["scores"]["f1/testA"] == 1.0 and doc["scores"]["f1/testB"] == 0.0
    assert doc["scores"]["f1"] == pytest.approx(2 * 2 / (2 * 2 + 0 + 2))
    assert set(doc["scores"]) == {
        f"{s}{p}" for s in ("f1", "object_dice", "object_hausdorff") for p in ("", "/testA", "/testB")
    }


def test_a_part_with_no_image_in_a_split_has_no_score(pair, tmp_path: Path) -> None:
    """Test B wholly private: the public split has no Test B image, so no Test B score (it showed a perfect 1.0, Hausdorff 0)."""
    truth, sub = pair
    (tmp_path / "public.txt").write_text("testA_1\n")
    contest = tmp_path / "contest.toml"
    contest.write_text(
        f'id = "parts"\ntitle = "Parts"\nchallenge = "glas"\ntruth = "{truth}"\n[parameters]\nparts = ["testA", "testB"]\n[split]\npublic_list = "public.txt"\n'
        '[[phase]]\nname = "one"\nstart = 2026-01-01T00:00:00Z\nend = 2026-02-01T00:00:00Z\nsubmissions = "files"\n'
    )
    code, output = run("evaluate", "--contest", str(contest), "--submission", str(sub), "--json", "-", "--workers", "1")
    assert code == 0, output
    splits = json.loads(output)["splits"]
    assert splits["public"]["scores"]["f1/testA"] == 1.0
    assert {k: v for k, v in splits["public"]["scores"].items() if k.endswith("/testB")} == dict.fromkeys(
        ("f1/testB", "object_dice/testB", "object_hausdorff/testB")
    )
    assert splits["private"]["scores"]["f1/testB"] == 1.0 and splits["private"]["scores"]["f1/testA"] is None
    assert not [w for w in splits["public"]["warnings"] if w["code"] == "infinite_hausdorff"]


def test_a_part_matching_no_image_is_a_usage_error(pair) -> None:
    truth, sub = pair
    code, output = run(
        "evaluate", "glas", "--truth", str(truth), "--submission", str(sub), "--set", "parts=testa,testB"
    )
    assert code == 2 and "part 'testa' matches no image" in output and "testA" in output


@pytest.mark.parametrize("bits", [8, 16])
def test_labels_with_transparency_are_read_as_labels(pair, bits: int) -> None:
    truth, sub = pair
    labels = glands().astype(np.uint8 if bits == 8 else np.uint16)
    Image.fromarray(labels).save(sub / "testA_1_seg.png", format="PNG", transparency=0)
    assert b"tRNS" in (sub / "testA_1_seg.png").read_bytes()
    code, doc = evaluate(truth, sub)
    assert code == 0 and doc["details"]["per_image"]["testA_1"]["f1"] == 1.0, doc["errors"]


def test_submission_one_folder_down_gets_a_hint(pair) -> None:
    truth, sub = pair
    (sub / "team").mkdir()
    for path in sub.glob("*.png"):
        path.rename(sub / "team" / path.name)
    code, doc = evaluate(truth, sub)
    assert code == 1 and any(e["code"] == "one_level_down" and "sub/team" in e["message"] for e in doc["errors"])


@pytest.mark.parametrize(
    ("make", "fragment"),
    [
        (lambda p: save_png(p, np.zeros((20, 31), np.uint8)), "is 31x20, but the truth image is 30x20"),
        (lambda p: save_png(p, np.zeros((20, 30, 3), np.uint8)), "one channel"),
        (lambda p: Image.fromarray(np.zeros((20, 30), np.float32)).save(p, format="TIFF"), "floating-point"),
        (lambda p: p.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 10), "no IHDR"),
        (lambda p: p.write_bytes(b"GIF89a"), "not a PNG, BMP or TIFF"),
    ],
)
def test_rejections(pair, make, fragment: str) -> None:
    truth, sub = pair
    make(sub / "testA_1_seg.png")
    code, doc = evaluate(truth, sub)
    assert code == 1 and fragment in doc["errors"][0]["message"], doc["errors"]


def test_two_files_for_one_image_are_rejected(pair) -> None:
    truth, sub = pair
    save_png(sub / "testA_1_pred.png", glands().astype(np.uint8))
    code, doc = evaluate(truth, sub)
    assert code == 1 and doc["errors"][0]["code"] == "ambiguous_stem"


def test_custom_suffixes(tmp_path: Path) -> None:
    save_png(tmp_path / "t" / "x_gt.png", glands().astype(np.uint8))
    save_png(tmp_path / "s" / "x_out.png", glands().astype(np.uint8))
    code, doc = evaluate(tmp_path / "t", tmp_path / "s", "--set", "suffixes=_gt,_out")
    assert code == 0 and doc["scores"]["f1"] == 1.0


def test_truth_problems_exit_2(tmp_path: Path) -> None:
    (tmp_path / "t").mkdir()
    (tmp_path / "s").mkdir()
    code, output = run("evaluate", "glas", "--truth", str(tmp_path / "t"), "--submission", str(tmp_path / "s"))
    assert code == 2 and "holds no PNG, BMP or TIFF" in output
    save_png(tmp_path / "t" / "x.png", np.zeros((4, 4, 3), np.uint8))
    code, output = run("evaluate", "glas", "--truth", str(tmp_path / "t"), "--submission", str(tmp_path / "s"))
    assert code == 2 and "one channel" in output


def test_per_image_details_match_the_kernel(pair) -> None:
    truth, sub = pair
    seg = glands()
    seg[3, 20] = 7  # a small false object far away
    save_png(sub / "testA_1_seg.png", seg.astype(np.uint8))
    _code, doc = evaluate(truth, sub)
    stats = image_stats(glands(), seg, math.hypot(20, 30))
    image = doc["details"]["per_image"]["testA_1"]
    assert (image["fp"], image["object_dice"], image["object_hausdorff"]) == (
        1,
        stats.object_dice,
        stats.object_hausdorff,
    )


def test_noise_labels_are_refused_within_seconds_not_scored_for_minutes(tmp_path: Path) -> None:
    import time

    from podium.synthetic.glas import make_glands

    rng = np.random.default_rng(0)
    truth = make_glands((261, 388), 10, rng)
    save_png(tmp_path / "truth" / "a_anno.png", truth.astype(np.uint8))
    save_png(
        tmp_path / "sub" / "a_seg.png", rng.integers(1, 65536, truth.shape).astype(np.uint16)
    )  # every label scattered
    start = time.process_time()  # CPU seconds (every thread's): a loaded machine stretches the wall clock, not these
    code, doc = evaluate(tmp_path / "truth", tmp_path / "sub")
    assert code == 1 and doc["errors"][0]["code"] == "too_complex" and "scattered" in doc["errors"][0]["message"]
    assert time.process_time() - start < 10
    dots = rng.random(truth.shape) < 0.2  # a binary mask of dots: thousands of pieces, scored
    save_png(tmp_path / "sub" / "a_seg.png", (dots * 255).astype(np.uint8))
    code, doc = evaluate(tmp_path / "truth", tmp_path / "sub")
    assert code == 0 and doc["details"]["fp"] > 1000


def test_the_checks_read_a_truth_image_again_once_it_is_written_again(pair) -> None:
    """The upload checks keep a truth image's shape and changes of label per process; a truth written again is read again."""
    from podium.core.result import REJECTED
    from podium.scoring.engine import evaluate as evaluated

    truth, sub = pair
    assert evaluated("glas", truth, sub, {}, checks_only=True).status != REJECTED
    save_png(truth / "testA_1_anno.png", glands(shape=(24, 30)).astype(np.uint8))
    checked = evaluated("glas", truth, sub, {}, checks_only=True)
    assert checked.status == REJECTED
    assert [(e.code, e.message) for e in checked.errors] == [("bad_image", "is 30x20, but the truth image is 30x24")]
