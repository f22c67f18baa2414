"""The worst items of a submission drawn as small PNG thumbnails (data URIs).

Drawn only when the report is given the truth and the submission (``podium
report --truth --submission``, or the service, which has both). The items are
found again with the challenge's own :meth:`~podium.challenges.base.Challenge.prepare`,
so the files are those that were scored. At most :data:`SHOWN` items are drawn,
the worst by the per-item score, whatever the size of the test set.

- glas: every object outlined on the truth's grid; green a true positive
  (segmented object covering more than half of its partner), orange a false
  positive, blue a truth object no true positive found.
- fuzzy-jaccard: the image's worst class; red is the predicted probability,
  green the truth, yellow where both are.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image
from scipy import ndimage

from podium.challenges import get
from podium.core.issues import IssueLog
from podium.core.parameters import resolve
from podium.formats import label_images, png
from podium.formats import probability_maps as maps

SHOWN = 8
SIDE = 240  # the longer side of a thumbnail, in pixels
GREEN, ORANGE, BLUE = (39, 174, 96), (230, 126, 34), (41, 128, 185)


@dataclass(frozen=True)
class Thumbnail:
    title: str
    caption: str
    uri: str  # data:image/png;base64,...


def png_uri(rgb: np.ndarray) -> str:
    """``rgb`` (height, width, 3) uint8, shrunk to :data:`SIDE` pixels at most, as a PNG data URI."""
    image = Image.fromarray(rgb)
    image.thumbnail((SIDE, SIDE), Image.Resampling.NEAREST)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=True)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _outline(mask: np.ndarray) -> np.ndarray:
    return mask & ~ndimage.binary_erosion(mask, iterations=max(1, max(mask.shape) // SIDE))


def glas_overlay(truth: np.ndarray, segmented: np.ndarray) -> tuple[np.ndarray, dict[str, int]]:
    """The outlined objects of one image, and how many of each colour.

    A segmented object is a true positive iff its partner (the truth object it
    overlaps most, ties to the smaller label) is covered more than half.
    """
    canvas = np.full((*truth.shape, 3), 245, np.uint8)
    canvas[truth > 0] = (225, 225, 225)
    found: set[int] = set()
    counts = {"true positive": 0, "false positive": 0, "missed": 0}
    for label in np.unique(segmented[segmented > 0]).tolist():
        mask = segmented == label
        under = truth[mask]
        under = under[under > 0]
        partner, overlap = 0, 0
        if under.size:
            values, hits = np.unique(under, return_counts=True)
            partner, overlap = int(values[np.argmax(hits)]), int(hits.max())
        hit = partner > 0 and 2 * overlap > int((truth == partner).sum())
        if hit:
            found.add(partner)
        canvas[_outline(mask)] = GREEN if hit else ORANGE
        counts["true positive" if hit else "false positive"] += 1
    for label in np.unique(truth[truth > 0]).tolist():
        if label not in found:
            canvas[_outline(truth == label)] = BLUE
            counts["missed"] += 1
    return canvas, counts


def _glas(document: dict[str, Any], job_items: list[Any], context: Any) -> list[Thumbnail]:
    per_image = document["details"].get("per_image", {})
    worst = sorted(per_image, key=lambda k: (per_image[k].get("f1") is not None, per_image[k].get("f1") or 0.0))[:SHOWN]
    items = {item.key: item for item in job_items}
    thumbnails = []
    for key in worst:
        item = items.get(key)
        if item is None:
            continue
        try:
            truth = label_images.read_label_image(item.truth)
            segmented = (
                np.zeros_like(truth)
                if item.submission is None
                else label_images.read_label_image(item.submission, truth.shape)
            )
        except png.ImageError:
            continue
        canvas, counts = glas_overlay(truth, segmented)
        caption = f"F1 {per_image[key].get('f1', 0):.3f}: " + ", ".join(f"{v} {k}" for k, v in counts.items())
        thumbnails.append(Thumbnail(key, caption, png_uri(canvas)))
    return thumbnails


def _fuzzy_jaccard(document: dict[str, Any], job_items: list[Any], context: Any) -> list[Thumbnail]:
    per_image = document["details"].get("per_image", {})
    classes = list(context.truth.classes)

    def mean(key: str) -> float:
        values = [v for v in per_image[key].values() if v is not None]
        return float(np.mean(values)) if values else 1.0

    items = {item.key: item for item in job_items}
    thumbnails = []
    for key in sorted(per_image, key=mean)[:SHOWN]:
        item = items.get(key)
        if item is None:
            continue
        scores = per_image[key]
        worst = min((c for c in classes if scores.get(c) is not None), key=lambda c: scores[c], default=classes[0])
        c = classes.index(worst)
        try:
            if context.truth.layout == "labels":
                truth = maps.read_labels(item.truth_files[0], len(classes), context.ignore) == c + 1
            else:
                truth = maps.read_mask(item.truth_files[c])
            predicted = (
                np.zeros(truth.shape, np.uint8)
                if item.predictions[c] is None
                else maps.read_probability_map(item.predictions[c], truth.shape)
            )
        except png.ImageError:
            continue
        rgb = np.zeros((*truth.shape, 3), np.uint8)
        rgb[..., 0] = (predicted.astype(np.uint16) * 255 // 100).astype(np.uint8)
        rgb[..., 1] = np.where(truth, 200, 0)
        thumbnails.append(Thumbnail(key, f"class {worst}: D {scores.get(worst, 0) or 0:.3f}", png_uri(rgb)))
    return thumbnails


DRAWERS: dict[str, Callable[[dict[str, Any], list[Any], Any], list[Thumbnail]]] = {
    "glas": _glas,
    "fuzzy-jaccard": _fuzzy_jaccard,
}


def thumbnails(document: dict[str, Any], truth: Path, submission: Path) -> list[Thumbnail]:
    """The worst items drawn, or none when the challenge has no drawing or the document was not scored."""
    drawer = DRAWERS.get(document["challenge"])
    if drawer is None or document.get("status") != "scored":
        return []
    challenge = get(document["challenge"])
    names = {p.name for p in challenge.parameters}
    settings = {
        k: ",".join(map(str, v)) if isinstance(v, list) else str(v)
        for k, v in document.get("parameters", {}).items()
        if k in names and v is not None
    }
    params = resolve(challenge.parameters, settings)
    job = challenge.prepare(truth, submission, params, IssueLog())
    return drawer(document, job.items, job.context)
