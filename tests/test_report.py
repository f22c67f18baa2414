"""podium report: one offline HTML file per result document, its charts built from the document alone."""

from __future__ import annotations

import json
import math
import re
from html import unescape
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from podium.challenges import IDS, get
from podium.cli import cli
from podium.publish.report import render_report
from podium.publish.report.charts import BINS, MAX_BARS, charts_of
from podium.publish.report.gallery import SHOWN, glas_overlay
from podium.scoring.engine import evaluate


@pytest.fixture(scope="module")
def documents(tmp_path_factory: pytest.TempPathFactory) -> dict:
    folder = tmp_path_factory.mktemp("demos")
    out = {}
    for challenge_id in IDS:
        demo = get(challenge_id).write_demo(folder / challenge_id)
        out[challenge_id] = (
            json.loads(evaluate(challenge_id, demo.truth, demo.submission, demo.settings).to_json()),
            demo,
        )
    return out


def specs_in(html: str) -> list[dict]:
    return [json.loads(unescape(s)) for s in re.findall(r"data-spec='([^']*)'", html)]


EXPECTED_CHARTS = {
    "fuzzy-jaccard": 2,
    "glas": 4,
    "face-clustering": 5,
    "camera-traps": 2,
    "ilsvrc2012-cls": 3,
    "ilsvrc2012-loc": 3,
    "ilsvrc2012-fine": 2,
}


@pytest.mark.parametrize("challenge_id", IDS)
def test_every_challenge_has_its_charts(challenge_id: str, documents: dict) -> None:
    document, _ = documents[challenge_id]
    html = render_report(document, "result.json")
    specs = specs_in(html)
    assert len(specs) == EXPECTED_CHARTS[challenge_id]
    for spec in specs:
        assert spec["data"]["values"], spec["description"]  # every chart has data to draw
        assert "mark" in spec or "layer" in spec
    page = re.sub(r"<script>.*?</script>", "", html, flags=re.S)  # the page without the inlined code
    assert (
        html.count("<script>") == 4 and "<script " not in page and "<link" not in page
    )  # nothing loaded from elsewhere
    assert not re.search(r'(src|href)="?(https?:)?//', page)
    assert "vegaLite.compile" in html


def test_large_test_sets_stay_small(documents: dict) -> None:
    document, _ = documents["glas"]
    per_image = {
        f"img{i:05d}": {
            "tp": 1,
            "fp": 0,
            "fn": 0,
            "f1": i / 50_000,
            "object_dice": 0.5,
            "object_hausdorff": float(i % 97),
        }
        for i in range(50_000)
    }
    big = document | {"details": document["details"] | {"per_image": per_image}}
    for chart in charts_of(big)[:3]:
        assert len(chart.spec["data"]["values"]) == BINS and chart.note == "50000 items"
    fine, _ = documents["ilsvrc2012-fine"]
    many = fine | {"scores": {"mean_ap": 0.5} | {f"ap/{c}": c / 1000 for c in range(1, 1001)}}
    bars = charts_of(many)[0]
    assert len(bars.spec["data"]["values"]) == MAX_BARS and bars.note == f"the {MAX_BARS} worst of 1000"
    assert [r["AP"] for r in bars.spec["data"]["values"]][:2] == [0.001, 0.002]  # the worst first
    assert len(render_report(big, "big.json").encode()) < 1_000_000


def test_face_clustering_limits_chart(documents: dict) -> None:
    document, _ = documents["face-clustering"]
    time_chart, ram_chart = charts_of(document)[-2:]  # seconds and megabytes on axes of their own
    assert time_chart.spec["data"]["values"] == [
        {"measure": "time (s)", "value": 95.0, "limit": 600.0},
        {"measure": "time (s)", "value": 95.0, "limit": 1200.0},
    ]
    assert ram_chart.spec["data"]["values"] == [{"measure": "RAM (MB)", "value": 850.0, "limit": 4096.0}]
    merges = document["details"]["merges"]
    assert merges and all(m["identities"] > 1 and m["largest_part"] < m["size"] for m in merges)


def test_run_against_limits() -> None:
    document = {
        "challenge": "glas",
        "status": "rejected",
        "scores": {},
        "run": {"wall_s": 3.5, "time_limit_s": 10, "peak_memory_mb": 120.0, "memory_limit_mb": 512},
    }
    time_chart, memory_chart = charts_of(document)  # seconds and megabytes on axes of their own
    assert time_chart.spec["data"]["values"] == [{"measure": "wall time (s)", "value": 3.5, "limit": 10}]
    assert memory_chart.spec["data"]["values"] == [{"measure": "peak memory (MB)", "value": 120.0, "limit": 512}]


def test_glas_overlay_colours() -> None:
    truth = np.zeros((20, 20), np.uint8)
    truth[2:8, 2:8] = 1  # found
    truth[12:18, 12:18] = 2  # missed
    segmented = np.zeros_like(truth)
    segmented[2:8, 2:7] = 1  # covers 30 of 36 pixels: a true positive
    segmented[12:14, 2:5] = 2  # over background: false positive
    segmented[12:18, 12:15] = 3  # covers exactly half of object 2: not a true positive (strictly more than half)
    _, counts = glas_overlay(truth, segmented)
    assert counts == {"true positive": 1, "false positive": 2, "missed": 1}


def test_report_command_with_gallery(documents: dict, tmp_path: Path) -> None:
    document, demo = documents["glas"]
    path = tmp_path / "glas.json"
    path.write_text(json.dumps(document))
    run = CliRunner().invoke(
        cli, ["report", str(path), "--truth", str(demo.truth), "--submission", str(demo.submission)]
    )
    assert run.exit_code == 0, run.output
    html = (tmp_path / "glas.html").read_text()
    assert 0 < html.count("data:image/png;base64,") <= SHOWN
    assert "green a true positive" in html


def test_report_command_refusals(documents: dict, tmp_path: Path) -> None:
    document, demo = documents["fuzzy-jaccard"]
    path = tmp_path / "r.json"
    path.write_text(json.dumps(document))
    assert CliRunner().invoke(cli, ["report", str(path), "--truth", str(demo.truth)]).exit_code == 2
    path.write_text(json.dumps(document | {"challenge": "nope"}))
    run = CliRunner().invoke(cli, ["report", str(path)])
    assert run.exit_code == 2 and "known challenge" in run.output
    path.write_text(json.dumps(document | {"details": {"per_image": 5}}))
    run = CliRunner().invoke(cli, ["report", str(path)])
    assert run.exit_code == 2 and "not those podium writes" in run.output and "Traceback" not in run.output
    minimal = {
        "challenge": "ilsvrc2012-fine",
        "status": "scored",
        "scores": {},
        "signature": {"challenge": "ilsvrc2012-fine"},
    }
    path.write_text(json.dumps(minimal))  # no podium_version, which the page shows (found by benchmarks/fuzz.py)
    run = CliRunner().invoke(cli, ["report", str(path)])
    assert run.exit_code == 2 and "not those podium writes" in run.output and "podium_version" in run.output
    path.write_text("{")
    assert CliRunner().invoke(cli, ["report", str(path)]).exit_code == 2


def test_histograms_bin_values_of_any_spread() -> None:
    """Values a few ulps apart (a GlaS submission with no image: every image's Hausdorff is the same but for rounding),
    equal values, and the widest finite spread each give 20 finite bins holding every value."""
    from podium.publish.report.charts import BINS, histogram

    for values in (
        [467.6162956955201, 467.61629569552],
        [5.0],
        [-3.0, -3.0],
        [1e20, 1e20 * (1 + 1e-15)],
        [-1e308, 1e308],
        [0.1, 0.5, 0.9],
    ):
        rows = histogram("t", values, "x").spec["data"]["values"]
        assert len(rows) == BINS and sum(r["count"] for r in rows) == len(values), values
        assert all(math.isfinite(r["from"]) and math.isfinite(r["to"]) and r["from"] < r["to"] for r in rows), values
        assert rows[0]["from"] == min(values) and rows[-1]["to"] >= max(values), values


def test_per_part_scores_each_on_its_own_axis() -> None:
    """F1 and Dice are fractions, Hausdorff is pixels: the per-part chart gives each score its own y axis."""
    scores = {
        f"{s}/{p}": v
        for p in ("testA", "testB")
        for s, v in (("f1", 0.9), ("object_dice", 0.8), ("object_hausdorff", 60.0))
    }
    document = {
        "challenge": "glas",
        "status": "scored",
        "scores": scores,
        "details": {"per_image": {}, "tp": 1, "fp": 0, "fn": 0},
    }
    (per_part,) = [c for c in charts_of(document) if c.title == "Per part"]
    assert per_part.spec["resolve"] == {"scale": {"y": "independent"}}
