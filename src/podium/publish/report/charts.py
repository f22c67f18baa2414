"""The charts of a report: Vega-Lite specifications written as plain dictionaries.

Every chart is built from a result document alone (scores, details, run), so
the same function serves ``podium report`` and the service's report page.
Large tests stay readable: per-item values become histograms of at most
:data:`BINS` bins, and per-class bars show at most :data:`MAX_BARS` classes
(the worst first) once there are more, so a chart's data is bounded whatever
the size of the test set.

>>> chart = bars("Per class", [{"class": "a", "D": 0.5}], "class", "D")
>>> chart.spec["mark"]["type"], chart.spec["data"]["values"]
('bar', [{'class': 'a', 'D': 0.5}])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

SCHEMA = "https://vega.github.io/schema/vega-lite/v6.json"  # an identifier: nothing is fetched
BINS = 20
MAX_BARS = 60
WIDTH = "container"


@dataclass(frozen=True)
class Chart:
    title: str
    spec: dict[str, Any]
    note: str = ""


def _spec(title: str, values: list[dict[str, Any]], **rest: Any) -> dict[str, Any]:
    """A spec of ``values``; the title is the figure's caption, not drawn in the chart."""
    return {"$schema": SCHEMA, "description": title, "width": WIDTH, "height": 220, "data": {"values": values}, **rest}


def bars(
    title: str, rows: list[dict[str, Any]], category: str, value: str, *, sort: str = "-y", note: str = ""
) -> Chart:
    """A bar per row: ``category`` along x, ``value`` up."""
    encoding: dict[str, Any] = {
        "x": {"field": category, "type": "nominal", "sort": sort, "axis": {"labelLimit": 120}},
        "y": {"field": value, "type": "quantitative"},
        "tooltip": [{"field": category}, {"field": value, "format": ".4f"}],
    }
    return Chart(title, _spec(title, rows, mark={"type": "bar", "tooltip": True}, encoding=encoding), note)


def histogram(title: str, values: Sequence[float], label: str, *, note: str = "") -> Chart:
    """Counts of ``values`` (finite ones) in :data:`BINS` equal bins, binned here so the chart's data stays small."""
    finite = np.asarray([v for v in values if v is not None], dtype=float)
    finite = finite[np.isfinite(finite)]
    if finite.size == 0:
        return Chart(title, _spec(title, [], mark="bar"), "no finite value")
    counts, edges = _binned(finite)
    rows = [{"from": float(a), "to": float(b), "count": int(c)} for a, b, c in zip(edges[:-1], edges[1:], counts)]
    encoding = {
        "x": {"field": "from", "bin": {"binned": True}, "type": "quantitative", "title": label},
        "x2": {"field": "to"},
        "y": {"field": "count", "type": "quantitative", "title": "items", "axis": {"tickMinStep": 1}},
        "tooltip": [{"field": "from", "format": ".4f"}, {"field": "to", "format": ".4f"}, {"field": "count"}],
    }
    return Chart(
        title,
        _spec(title, rows, mark={"type": "bar", "tooltip": True}, encoding=encoding),
        note or f"{finite.size} items",
    )


def _binned(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:data:`BINS` equal bins over finite ``values``, whatever their spread.

    Binned at the scale of the largest magnitude, so that no difference
    overflows (-1e308 and 1e308); values equal or a few ulps apart (467.61629569552
    and 467.6162956955201, which NumPy cannot split in 20) share bins one unit wide.
    """
    scale = max(1.0, float(np.abs(values).max()))
    low, high = float(values.min()) / scale, float(values.max()) / scale
    if high - low <= 1e-9:
        high = low + max(1.0 / scale, 1e-6)
    counts, edges = np.histogram(values / scale, bins=BINS, range=(low, high))
    return counts, edges * scale


def line(title: str, rows: list[dict[str, Any]], x: str, y: str) -> Chart:
    encoding = {
        "x": {"field": x, "type": "ordinal"},
        "y": {"field": y, "type": "quantitative"},
        "tooltip": [{"field": x}, {"field": y, "format": ".4f"}],
    }
    return Chart(title, _spec(title, rows, mark={"type": "line", "point": True, "tooltip": True}, encoding=encoding))


def against_limits(title: str, rows: list[dict[str, Any]]) -> Chart:
    """Measured values as bars with their limits as ticks: ``{"measure", "value", "limit"}`` rows."""
    spec = _spec(
        title,
        rows,
        encoding={"y": {"field": "measure", "type": "nominal", "title": None}},
        layer=[
            {
                "mark": {"type": "bar", "tooltip": True},
                "encoding": {
                    "x": {"field": "value", "type": "quantitative", "title": "measured (bar) and limit (tick)"}
                },
            },
            {
                "mark": {"type": "tick", "color": "#c0392b", "thickness": 3},
                "encoding": {"x": {"field": "limit", "type": "quantitative"}},
            },
        ],
    )
    spec["height"] = 40 * max(1, len(rows))
    return Chart(title, spec)


def _worst(rows: list[dict[str, Any]], value: str, higher_is_better: bool) -> tuple[list[dict[str, Any]], str]:
    """At most :data:`MAX_BARS` rows, the worst first, and a note when some were left out."""
    if len(rows) <= MAX_BARS:
        return rows, ""
    ordered = sorted(
        rows, key=lambda r: -np.inf if r[value] is None else (r[value] if higher_is_better else -r[value])
    )  # worst first, null worst
    return ordered[:MAX_BARS], f"the {MAX_BARS} worst of {len(rows)}"


def _per_class(document: dict[str, Any], prefix: str, label: str, higher_is_better: bool) -> Chart:
    rows = [
        {"class": name.split("/", 1)[1], label: v}
        for name, v in document["scores"].items()
        if name.startswith(prefix + "/")
    ]
    shown, note = _worst(rows, label, higher_is_better)
    return bars(f"{label} per class", shown, "class", label, note=note)


def fuzzy_jaccard(document: dict[str, Any]) -> list[Chart]:
    details = document["details"]
    per_image = details.get("per_image", {})
    means = [float(np.mean(d)) for d in ([v for v in img.values() if v is not None] for img in per_image.values()) if d]
    return [
        _per_class(document, "fuzzy_jaccard", "D", True),
        histogram("Per image: mean D over its classes", means, "mean D"),
    ]


GLAS_SCORES = (
    ("f1", "F1", True),
    ("object_dice", "object Dice", True),
    ("object_hausdorff", "object Hausdorff", False),
)


def glas(document: dict[str, Any]) -> list[Chart]:
    per_image = document["details"].get("per_image", {})
    charts = [
        histogram(f"Per image: {label}", [d.get(name) for d in per_image.values()], label)
        for name, label, _ in GLAS_SCORES
    ]
    parts = sorted({name.split("/", 1)[1] for name in document["scores"] if "/" in name})
    if parts:
        rows = [
            {"part": part, "score": label, "value": document["scores"].get(f"{name}/{part}")}
            for part in parts
            for name, label, _ in GLAS_SCORES
        ]
        charts.append(
            Chart(
                "Per part",
                _spec(
                    "Per part",
                    rows,
                    mark={"type": "bar", "tooltip": True},
                    encoding={
                        "x": {"field": "part", "type": "nominal"},
                        "y": {"field": "value", "type": "quantitative"},
                        "color": {"field": "part", "type": "nominal"},
                        "column": {"field": "score", "type": "nominal"},
                    },
                )
                | {"width": 120, "resolve": {"scale": {"y": "independent"}}},
            )  # F1 and Dice are fractions, Hausdorff pixels: an axis each
        )
    counts = [
        {"outcome": k, "objects": document["details"].get(v, 0)}
        for k, v in (("true positive", "tp"), ("false positive", "fp"), ("missed", "fn"))
    ]
    charts.append(bars("Objects: detected, false, missed", counts, "outcome", "objects", sort="none"))
    return charts


def face_clustering(document: dict[str, Any]) -> list[Chart]:
    details, parameters = document["details"], document.get("parameters", {})
    sizes = details.get("cluster_sizes", {})
    rows = [
        {"size": int(size), "side": side, "clusters": count}
        for side in ("true", "predicted")
        for size, count in sizes.get(side, {}).items()
    ]
    charts = [
        Chart(
            "Cluster sizes: truth and prediction",
            _spec(
                "Cluster sizes: truth and prediction",
                rows,
                mark={"type": "bar", "tooltip": True},
                encoding={
                    "x": {"field": "size", "type": "ordinal", "title": "images in the cluster"},
                    "xOffset": {"field": "side"},
                    "y": {"field": "clusters", "type": "quantitative"},
                    "color": {"field": "side", "type": "nominal"},
                },
            ),
        )
    ]
    for kind, parts in (("merges", "identities"), ("splits", "clusters")):
        listed = details.get(kind) or []
        if listed:
            key = "cluster" if kind == "merges" else "identity"
            charts.append(
                bars(
                    f"Largest {kind}: {parts} per {key}",
                    [{key: f"{key} {r[key]}", parts: r[parts], "size": r["size"]} for r in listed],
                    key,
                    parts,
                    sort="none",
                )
            )
    limits = [
        {"measure": "time (s)", "value": parameters.get("time_s"), "limit": parameters.get(t)}
        for t in ("th1_s", "th2_s")
    ] + [{"measure": "RAM (MB)", "value": parameters.get("ram_mb"), "limit": parameters.get("ram_max_mb")}]
    for unit, title in (
        ("time (s)", "Time against the thresholds"),
        ("RAM (MB)", "RAM against the threshold"),
    ):  # seconds and megabytes: never one axis
        measured = [r for r in limits if r["measure"] == unit and r["value"] is not None]
        if measured:
            charts.append(against_limits(title, measured))
    return charts


def camera_traps(document: dict[str, Any]) -> list[Chart]:
    d = document["details"]
    breakdown = [
        {"rule": "+1 matched box", "points": d.get("matched", 0)},
        {"rule": "-1 false detection", "points": -d.get("false_detections", 0)},
        {"rule": "-1 missed object", "points": -d.get("missed", 0)},
        {"rule": "+5 right class", "points": 5 * d.get("class_right", 0)},
        {"rule": "-5 wrong class", "points": -5 * d.get("class_wrong", 0)},
    ]
    per_photo = d.get("per_photo", {})
    return [
        bars("Points by rule", breakdown, "rule", "points", sort="none"),
        histogram("Per photo: points", [p["points"] for p in per_photo.values()], "points"),
    ]


def ilsvrc(document: dict[str, Any]) -> list[Chart]:
    prefix = "loc_error" if document["challenge"] == "ilsvrc2012-loc" else "error"
    curve = [{"guesses": k, "error": document["scores"].get(f"{prefix}@{k}")} for k in range(1, 6)]
    per_class = document["details"].get("per_class", {})
    errors = [{"class": c, "error@5": v[f"{prefix}@5"] / v["images"]} for c, v in per_class.items() if v.get("images")]
    shown, note = _worst(errors, "error@5", False)
    return [
        line("Error with 1 to 5 guesses", curve, "guesses", "error"),
        histogram("Per class: error with 5 guesses", [e["error@5"] for e in errors], "error@5"),
        bars("Classes with the highest error@5", shown, "class", "error@5", note=note),
    ]


def ilsvrc_fine(document: dict[str, Any]) -> list[Chart]:
    return [
        _per_class(document, "ap", "AP", True),
        histogram("Per class: AP", [v for k, v in document["scores"].items() if k.startswith("ap/")], "AP"),
    ]


def run(document: dict[str, Any]) -> list[Chart]:
    """The program's time and memory against the contest's limits."""
    ran = document.get("run")
    if not ran:
        return []
    charts = [
        against_limits(
            "The program's time against its limit",
            [{"measure": "wall time (s)", "value": ran.get("wall_s"), "limit": ran.get("time_limit_s")}],
        )
    ]
    if ran.get("peak_memory_mb") is not None:  # megabytes: a chart of its own, not the seconds' axis
        charts.append(
            against_limits(
                "The program's memory against its limit",
                [
                    {
                        "measure": "peak memory (MB)",
                        "value": ran.get("peak_memory_mb"),
                        "limit": ran.get("memory_limit_mb"),
                    }
                ],
            )
        )
    return charts


BUILDERS: dict[str, Callable[[dict[str, Any]], list[Chart]]] = {
    "fuzzy-jaccard": fuzzy_jaccard,
    "glas": glas,
    "face-clustering": face_clustering,
    "camera-traps": camera_traps,
    "ilsvrc2012-cls": ilsvrc,
    "ilsvrc2012-loc": ilsvrc,
    "ilsvrc2012-fine": ilsvrc_fine,
}


def charts_of(document: dict[str, Any]) -> list[Chart]:
    """Every chart of a scored document (none for a rejected one), the run's last."""
    if document.get("status") != "scored":
        return run(document)
    return BUILDERS[document["challenge"]](document) + run(document)
