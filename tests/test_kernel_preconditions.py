"""Every compiled kernel refuses, at its entry, the inputs it would read or write outside its arrays
with (``ValueError`` naming it), instead of reading memory it does not own.

No caller of podium's passes such inputs; these tests call the kernels directly. ``make test``
runs them again, with the kernel and fuzz tests, under ``NUMBA_BOUNDSCHECK=1`` in a cache folder
of their own (Numba's cache key leaves the flag out), where any access out of bounds that a
check misses raises ``IndexError``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from podium.formats import detection_scan, png_rows
from podium.metrics import detection_matching, fuzzy_jaccard_sums, label_scan
from podium.metrics.object_segmentation import _Side

I64 = np.int64


def _side(codes: list[list[int]]) -> _Side:
    return _Side(np.array(codes, np.int32))


def _directed_args(**changes: Any) -> list[Any]:
    """Valid arguments of :func:`label_scan.directed_squared` (object 1 of one side to object 1 of the other), with ``changes``."""
    own, other = _side([[1, 1, 0], [1, 1, 0], [0, 0, 0]]), _side([[0, 0, 0], [0, 1, 1], [0, 1, 1]])
    args = {
        "a_codes": np.array([1], I64),
        "b_codes": np.array([1], I64),
        "own_codes": own.codes,
        "own_flags": own.flags,
        "own_y8": own.edge_pixels.y,
        "own_x8": own.edge_pixels.x,
        "own_start8": own.edge_pixels.start,
        "own_extremes": own.extremes,
        "other_codes": other.codes,
        "other_y4": other.boundary.y,
        "other_x4": other.boundary.x,
        "other_start4": other.boundary.start,
        "other_octagon": other.octagon,
        "work_left": 1e9,
    }
    args.update(changes)
    return list(args.values())


def _group_args(**changes: Any) -> list[Any]:
    """Valid arguments of :func:`label_scan.group_edges` for a 3x3 image of one object, with ``changes``."""
    codes = np.ones((3, 3), np.int32)
    flags, _area, on4, on8, _octagon, edge_y, edge_x = label_scan.object_shapes(codes, 1)
    start4, start8 = np.array([0, on4[1]], I64), np.array([0, on8[1]], I64)
    args = {
        "codes": codes,
        "flags": flags,
        "edge_y": edge_y,
        "edge_x": edge_x,
        "start4": start4,
        "start8": start8,
        "y4": np.empty(on4[1], I64),
        "x4": np.empty(on4[1], I64),
        "y8": np.empty(on8[1], I64),
        "x8": np.empty(on8[1], I64),
    }
    args.update(changes)
    return list(args.values())


def _scan_args(**changes: Any) -> list[Any]:
    """Valid arguments of the camera-trap table scan for two lines, with ``changes``."""
    data = np.frombuffer(b"a\t0.5 0.5 0.1 0.1\t1\nb\t0.5 0.5 0.1 0.1\t0", np.uint8)
    room = 2
    args = {
        "data": data,
        "names": data,
        "name_spans": np.empty((room, 2), I64),
        "n_names": 0,
        "new_names": True,
        "photo": np.empty(room, I64),
        "xywh": np.empty((room, 4)),
        "cls": np.empty(room, np.int8),
        "spans": np.empty((room, 2), I64),
        "lines": np.empty(room, I64),
        "inexact": np.zeros(room, np.bool_),
    }
    args.update(changes)
    return list(args.values())


def _matching_args(**changes: Any) -> list[Any]:
    """Valid arguments of :func:`detection_matching._decide` for one photo of one prediction and one truth box, with ``changes``."""
    corners = np.array([[0.1], [0.1], [0.3], [0.3]])
    args = {
        "p_order": np.array([0], I64),
        "p_start": np.array([0, 1], I64),
        "p_corners": corners,
        "t_order": np.array([0], I64),
        "t_start": np.array([0, 1], I64),
        "t_corners": corners,
        "truth_of": np.full(1, -1, I64),
        "p_c": np.empty(1, I64),
        "t_c": np.empty(1, I64),
        "iou_c": np.empty(1),
        "exact": np.zeros(1, np.bool_),
        "contested": np.zeros(1, np.bool_),
    }
    args.update(changes)
    return list(args.values())


CASES: dict[str, tuple[Callable[..., Any], list[Any]]] = {
    "unfilter: a short buffer": (png_rows.unfilter, [np.zeros(5, np.uint8), np.empty((2, 3), np.uint8), 1]),
    "unfilter: step 0": (png_rows.unfilter, [np.zeros(8, np.uint8), np.empty((2, 3), np.uint8), 0]),
    "renumber: a label past the table": (label_scan.renumber, [np.array([[0, 9]], np.uint16), 8]),
    "renumber: no table": (label_scan.renumber, [np.zeros((0, 0), np.uint16), 0]),
    "object_shapes: a code past n": (label_scan.object_shapes, [np.array([[0, 2]], np.int32), 1]),
    "object_shapes: a negative code": (label_scan.object_shapes, [np.array([[-1, 0]], np.int32), 1]),
    "object_shapes: n below 0": (label_scan.object_shapes, [np.zeros((1, 1), np.int32), -1]),
    "_marked: size past the marks": (label_scan._marked, [np.zeros(8, np.uint8), 9, np.empty(16, I64)]),
    "_marked: no room for positions": (label_scan._marked, [np.ones(8, np.uint8), 8, np.empty(4, I64)]),
    "_grown: more used than held": (label_scan._grown, [np.zeros(4, I64), 8, 6]),
    "overlaps: a code past g_n": (label_scan.overlaps, [np.ones((2, 2), np.int32), np.full((2, 2), 3, np.int32), 1, 2]),
    "overlaps: shapes differ": (label_scan.overlaps, [np.ones((2, 2), np.int32), np.ones((2, 3), np.int32), 1, 1]),
    "group_edges: short output": (label_scan.group_edges, _group_args(y8=np.empty(2, I64))),
    "group_edges: a pixel outside": (
        label_scan.group_edges,
        _group_args(edge_y=np.array([0, 0, 0, 1, 1, 2, 2, 7], I64)),
    ),
    "group_edges: wrong counts": (
        label_scan.group_edges,
        _group_args(codes=np.array([[1, 1, 1], [1, 1, 1], [1, 1, 2]], np.int32)),
    ),
    "directed_squared: a code past n": (label_scan.directed_squared, _directed_args(a_codes=np.array([2], I64))),
    "directed_squared: codes of two sizes": (
        label_scan.directed_squared,
        _directed_args(b_codes=np.array([1, 1], I64)),
    ),
    "directed_squared: a box outside": (
        label_scan.directed_squared,
        _directed_args(own_extremes=np.array([[0, 9, 0, 1]], I64)),
    ),
    "_farthest_squared: unequal lengths": (
        label_scan._farthest_squared,
        [np.zeros(3, I64), np.zeros(2, I64), np.zeros(1, I64), np.zeros(1, I64)],
    ),
    "_scan: outputs of two sizes": (detection_scan._scan, _scan_args(cls=np.empty(1, np.int8))),
    "_scan: no room for a row": (
        detection_scan._scan,
        _scan_args(
            **{k: v[:1] for k, v in zip(["photo", "xywh", "cls", "spans", "lines", "inexact"], _scan_args()[5:])}
        ),
    ),
    "_scan: no room for a name": (detection_scan._scan, _scan_args(name_spans=np.empty((1, 2), I64))),
    "_scan: a known name outside": (
        detection_scan._scan,
        _scan_args(names=np.zeros(2, np.uint8), name_spans=np.array([[0, 5], [0, 0]], I64), n_names=1, new_names=False),
    ),
    "_hash: a span outside": (detection_scan._hash, [np.zeros(4, np.uint8), 2, 9]),
    "_same: a span outside": (detection_scan._same, [np.zeros(4, np.uint8), 0, 6, np.zeros(8, np.uint8), 0, 6]),
    "_decimal: a span outside": (detection_scan._decimal, [np.zeros(4, np.uint8), 0, 9]),
    "_edge_space: an empty span": (detection_scan._edge_space, [np.zeros(4, np.uint8), 2, 2]),
    "_name_slots: a capacity not a power of two": (
        detection_scan._name_slots,
        [np.zeros(4, np.uint8), np.zeros((1, 2), I64), 1, 3],
    ),
    "_name_slots: no free slot": (
        detection_scan._name_slots,
        [np.zeros(4, np.uint8), np.array([[0, 1], [1, 2]], I64), 2, 2],
    ),
    "_find: a table not a power of two": (
        detection_scan._find,
        [np.full(3, -1, I64), np.zeros(4, np.uint8), np.zeros((1, 2), I64), np.zeros(4, np.uint8), 0, 1],
    ),
    "_decide: a box that does not exist": (detection_matching._decide, _matching_args(t_order=np.array([3], I64))),
    "_decide: groups out of order": (detection_matching._decide, _matching_args(p_start=np.array([1, 1], I64))),
    "_decide: no room for a candidate": (
        detection_matching._decide,
        _matching_args(p_c=np.empty(0, I64), t_c=np.empty(0, I64), iou_c=np.empty(0)),
    ),
    "_decide: photos of two counts": (detection_matching._decide, _matching_args(t_start=np.array([0, 1, 1], I64))),
    "_count_candidates: corners of 3 rows": (
        detection_matching._count_candidates,
        _matching_args(p_corners=np.zeros((3, 1)))[:6],
    ),
    "_rank: a span outside": (detection_matching._rank, [np.zeros(2, I64), np.zeros(2), np.zeros(2), 0, 3]),
    "_sums: a short prediction": (
        fuzzy_jaccard_sums._sums,
        [np.zeros(4, np.uint8), 1, np.zeros(3, np.uint8), np.zeros(0, np.uint8)],
    ),
    "_sums: a short roi": (
        fuzzy_jaccard_sums._sums,
        [np.zeros(4, np.uint8), 1, np.zeros(4, np.uint8), np.zeros(3, np.uint8)],
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_kernels_refuse_what_they_would_read_outside_their_arrays_with(case: str) -> None:
    kernel, args = CASES[case]
    with pytest.raises(
        ValueError, match=rf"^({case.split(':')[0]}|_check_groups): "
    ):  # the matching's kernels share their entry check
        kernel(*args)


@pytest.mark.parametrize("case", ["directed_squared", "group_edges", "_scan", "_decide"])
def test_the_valid_arguments_the_cases_start_from_are_accepted(case: str) -> None:
    """The refusals above come from the one change each makes: the arguments they change are valid."""
    {
        "directed_squared": lambda: label_scan.directed_squared(*_directed_args()),
        "group_edges": lambda: label_scan.group_edges(*_group_args()),
        "_scan": lambda: detection_scan._scan(*_scan_args()),
        "_decide": lambda: detection_matching._decide(*_matching_args()),
    }[case]()


def test_an_image_without_columns_reads_no_pixel() -> None:
    """0.8.5 read ``row[0]`` of a row of width 0 (outside the array; ``IndexError`` under ``NUMBA_BOUNDSCHECK``)."""
    flags, area, *_ = label_scan.object_shapes(np.zeros((4, 0), np.int32), 0)
    assert flags.shape == (4, 0) and area.tolist() == [0]
