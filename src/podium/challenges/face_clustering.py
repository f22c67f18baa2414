"""``face-clustering``: a CSV of cluster numbers scored by pairwise F, NMI and final points.

Rules: ``shared/seeds/001_4a5ac8e8268eee3c.txt`` (sections 4 and 5). Clustering
quality is the pairwise F-measure (β = 1) and NMI with the arithmetic mean of
the entropies (:mod:`podium.metrics.clustering`). The rules' Table 1, which
weighs quality, running time and RAM into the final points, is missing from
the published text; podium implements::

    final = 100 (w_f F + w_nmi NMI + w_time T + w_ram R) / (w_f + w_nmi + w_time + w_ram)
    T = 1 - t / Th1 for t < Th1, 0 for Th1 <= t < Th2; t >= Th2 disqualifies (final = 0)
    R = max(0, 1 - ram / RAM_max)

Organizers must set the thresholds; ``time_s`` and ``ram_mb`` are the
measurements (``podium run`` fills them in). Without them ``final`` is null.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from podium.challenges.base import Challenge, ItemResult, Job, ScoreSpec, rows_by_split
from podium.challenges.program import Program
from podium.core.errors import UsageError
from podium.core.issues import IssueLog
from podium.core.parameters import choice, real
from podium.formats import clustering_csv
from podium.formats.folders import list_folder, single_file
from podium.formats.truth_cache import cached
from podium.metrics.clustering import (
    AVERAGES,
    BCubed,
    ContingencyTable,
    PairCounts,
    mutual_information,
    normalized_mutual_information,
)
from podium.synthetic.demo import Demo

LARGEST_SHOWN = 5


@dataclass(frozen=True)
class Item:
    key: str
    identity: NDArray[np.int64]  # truth code per image
    cluster: NDArray[np.int64]  # submitted cluster number per image, same order
    names: list[str]  # the images, same order


@dataclass(frozen=True)
class Context:
    beta: float
    nmi_average: str
    final: dict[str, Any]  # the parameters of final_points


class FaceClusteringProgram(Program):
    """The program writes one ``.csv`` in its working directory. The time limit is Th2
    (``th2_s``) unless ``--time-limit`` is given; the measured time and peak memory
    become ``time_s`` and ``ram_mb`` of the final points."""

    def time_limit(self, images: Path, params: dict[str, Any]) -> float | None:
        if params["th2_s"] is None:
            raise UsageError("podium run face-clustering needs --time-limit S or --set th2_s=S (Th2, the hard limit)")
        return float(params["th2_s"])

    def has_output(self, workdir: Path) -> bool:
        return any(p.suffix.lower() == ".csv" for p in list_folder(workdir).files)

    def scoring_settings(self, wall_s: float, peak_memory_mb: float) -> dict[str, str]:
        return {"time_s": repr(wall_s), "ram_mb": repr(peak_memory_mb)}


class FaceClustering(Challenge[Context, Item, ContingencyTable]):
    id = "face-clustering"
    checked_by_prepare = True  # the CSV is read and checked whole in prepare
    title = "Face clustering by identity: pairwise F-measure, NMI, running time and RAM points"
    rules = 'the contest\'s technical rules, in Persian ("قوانین فنی مسابقه"), sections 4 and 5'
    parameters = (
        real("beta", 1.0, "beta of the pairwise F-measure", exclusive=True),
        choice(
            "nmi_average", "arithmetic", "mean of the entropies that normalizes NMI (the rules: arithmetic)", AVERAGES
        ),
        choice(
            "order",
            "strict",
            "rows out of ascending name order: strict = rejected (the rules), ignore = warning",
            ("strict", "ignore"),
        ),
        real("time_s", None, "measured running time in seconds (podium run fills it in)", role="measured"),
        real("ram_mb", None, "measured peak RAM in MB (podium run fills it in)", role="measured"),
        real(
            "th1_s",
            None,
            "Th1: time points fall from full at 0 s to zero at Th1; organizers must set it",
            exclusive=True,
            contest_must_set=True,
        ),
        real(
            "th2_s",
            None,
            "Th2: a running time at or above it disqualifies; organizers must set it",
            exclusive=True,
            contest_must_set=True,
        ),
        real(
            "ram_max_mb",
            None,
            "RAM points fall from full at 0 MB to zero at this; organizers must set it",
            exclusive=True,
            contest_must_set=True,
        ),
        real("w_f", 0.4, "weight of the pairwise F-measure in the final points"),
        real("w_nmi", 0.4, "weight of NMI in the final points"),
        real("w_time", 0.1, "weight of the time points in the final points"),
        real("w_ram", 0.1, "weight of the RAM points in the final points"),
    )
    scores = (
        ScoreSpec(
            "final", True, "final points out of 100 (null without time_s, ram_mb and the thresholds)", measured=True
        ),
        ScoreSpec("pairwise_f", True, "pairwise F-measure (beta = 1 by default)"),
        ScoreSpec("nmi", True, "normalized mutual information"),
        ScoreSpec("pairwise_precision", True, "pairs put together that belong together"),
        ScoreSpec("pairwise_recall", True, "pairs that belong together put together"),
        ScoreSpec("bcubed_precision", True, "BCubed precision"),
        ScoreSpec("bcubed_recall", True, "BCubed recall"),
        ScoreSpec("bcubed_f", True, "BCubed F"),
        ScoreSpec("clusters", None, "number of predicted clusters"),
    )
    primary = "final"
    program = FaceClusteringProgram()

    def prepare(self, truth: Path, submission: Path, params: dict[str, Any], log: IssueLog) -> Job[Context, Item]:
        final = {
            k: params[k]
            for k in ("time_s", "ram_mb", "th1_s", "th2_s", "ram_max_mb", "w_f", "w_nmi", "w_time", "w_ram")
        }
        if final["th1_s"] is not None and final["th2_s"] is not None and final["th2_s"] < final["th1_s"]:
            raise UsageError(f"th2_s={final['th2_s']:g} must not be below th1_s={final['th1_s']:g}")
        if final["w_f"] + final["w_nmi"] + final["w_time"] + final["w_ram"] == 0:
            raise UsageError("the weights w_f, w_nmi, w_time, w_ram must not all be 0")
        table = _read_truth(truth)
        context = Context(params["beta"], params["nmi_average"], final)
        path = single_file(submission, (".csv",), log)
        clusters = None if path is None else clustering_csv.read_submission(path, table, params["order"], log)
        items = (
            [Item(path.name, table.identity, clusters, table.names)]
            if path is not None and clusters is not None
            else []
        )
        return Job(context, items)

    def units(self, truth: Path, params: dict[str, Any]) -> list[str]:
        """The images of the truth CSV."""
        return _read_truth(truth).names

    def divide(self, context: Context, item: Item, split_of: Mapping[str, str]) -> list[tuple[str, Item]]:
        """The images of each split, with their truth identities and submitted clusters (codes shared by all parts)."""
        return [
            (
                split,
                replace(
                    item, identity=item.identity[rows], cluster=item.cluster[rows], names=[item.names[i] for i in rows]
                ),
            )
            for split, rows in rows_by_split(item.names, split_of)
        ]

    def evaluate_item(self, context: Context, item: Item) -> ItemResult[ContingencyTable]:
        return ItemResult(ContingencyTable.from_labels(item.identity, item.cluster))

    def finalize(
        self, context: Context, stats: ContingencyTable, details: dict[str, Any], log: IssueLog
    ) -> tuple[dict[str, float | int | None], dict[str, Any]]:
        pairs = PairCounts.of(stats)
        bcubed = BCubed.of(stats)
        f = pairs.f_score(context.beta)
        nmi = normalized_mutual_information(stats, context.nmi_average)  # type: ignore[arg-type]
        points = final_points(f, nmi, **context.final)
        if points.missing and any(context.final[k] is not None for k in ("time_s", "ram_mb")):
            log.warning("final_incomplete", f"final points need {', '.join(points.missing)}; final is null")
        scores: dict[str, float | int | None] = {
            "final": points.final,
            "pairwise_f": f,
            "nmi": nmi,
            "pairwise_precision": pairs.precision,
            "pairwise_recall": pairs.recall,
            "bcubed_precision": bcubed.precision,
            "bcubed_recall": bcubed.recall,
            "bcubed_f": bcubed.f_score,
            "clusters": int(stats.clusters.sizes.size),
        }
        n = stats.n_items
        return scores, {
            "images": n,
            "pairs": {
                "tp": pairs.tp,
                "fp": pairs.fp,
                "fn": pairs.fn,
                "tn": n * (n - 1) // 2 - pairs.tp - pairs.fp - pairs.fn,
            },
            "true_clusters": int(stats.classes.sizes.size),
            "predicted_clusters": int(stats.clusters.sizes.size),
            "largest_true_clusters": sorted(stats.classes.sizes.tolist(), reverse=True)[:LARGEST_SHOWN],
            "largest_predicted_clusters": sorted(stats.clusters.sizes.tolist(), reverse=True)[:LARGEST_SHOWN],
            "cluster_sizes": {
                "true": _size_counts(stats.classes.sizes),
                "predicted": _size_counts(stats.clusters.sizes),
            },
            "merges": _most_mixed(stats.pred, stats.true, stats.count, "cluster", "identities"),
            "splits": _most_mixed(stats.true, stats.pred, stats.count, "identity", "clusters"),
            "mutual_information": mutual_information(stats),
            "time_points": points.time_points,
            "ram_points": points.ram_points,
            "disqualified": points.disqualified,
        }

    def write_demo(self, folder: Path) -> Demo:
        from podium.synthetic.face_clustering import write_demo

        truth, submission = write_demo(folder)
        # Illustrative measurements and thresholds: real ones come from podium run and the organizers.
        return Demo(
            truth, submission, {"time_s": "95", "ram_mb": "850", "th1_s": "600", "th2_s": "1200", "ram_max_mb": "4096"}
        )


@dataclass(frozen=True)
class FinalPoints:
    final: float | None
    time_points: float | None
    ram_points: float | None
    disqualified: str | None
    missing: list[str]


def final_points(
    f: float,
    nmi: float,
    *,
    time_s: float | None,
    ram_mb: float | None,
    th1_s: float | None,
    th2_s: float | None,
    ram_max_mb: float | None,
    w_f: float,
    w_nmi: float,
    w_time: float,
    w_ram: float,
) -> FinalPoints:
    """The final points out of 100 (module docstring); null while anything is missing."""
    given = {"time_s": time_s, "ram_mb": ram_mb, "th1_s": th1_s, "th2_s": th2_s, "ram_max_mb": ram_max_mb}
    missing = [name for name, value in given.items() if value is None]
    if missing:
        return FinalPoints(None, None, None, None, missing)
    assert time_s is not None and ram_mb is not None and th1_s and th2_s and ram_max_mb
    if time_s >= th2_s:
        return FinalPoints(0.0, 0.0, None, f"running time {time_s:g} s reached Th2 = {th2_s:g} s", [])
    time_points = max(0.0, 1.0 - time_s / th1_s)
    ram_points = max(0.0, 1.0 - ram_mb / ram_max_mb)
    total = w_f * f + w_nmi * nmi + w_time * time_points + w_ram * ram_points
    return FinalPoints(100.0 * total / (w_f + w_nmi + w_time + w_ram), time_points, ram_points, None, [])


def _size_counts(sizes: NDArray[np.int64]) -> dict[str, int]:
    """How many groups have each size: ``{size: groups}``."""
    values, counts = np.unique(sizes, return_counts=True)
    return {str(v): int(c) for v, c in zip(values.tolist(), counts.tolist())}


def _most_mixed(
    group: NDArray[np.int64], other: NDArray[np.int64], count: NDArray[np.int64], name: str, parts: str
) -> list[dict[str, int]]:
    """The groups (label codes) spread over the most labels of the other side: a merge or a split, largest first."""
    labels, inverse = np.unique(group, return_inverse=True)
    spread = np.bincount(inverse, minlength=labels.size)
    size = np.bincount(inverse, weights=count, minlength=labels.size).astype(np.int64)
    top = np.zeros(labels.size, np.int64)
    np.maximum.at(top, inverse, count)
    mixed = np.flatnonzero(spread > 1)
    chosen = mixed[np.lexsort((labels[mixed], -size[mixed], -spread[mixed]))][:LARGEST_SHOWN]
    return [
        {name: int(labels[i]), "size": int(size[i]), parts: int(spread[i]), "largest_part": int(top[i])}
        for i in chosen.tolist()
    ]


def _read_truth(truth: Path) -> clustering_csv.TruthTable:
    """The truth CSV, read once per process (:mod:`podium.formats.truth_cache`)."""
    return cached("face_clustering.truth", (truth,), lambda: clustering_csv.read_truth(truth))
