"""Compiled loops over label images (Numba): renumbering, each object's pixels and boundaries,
the overlapping pairs, and directed Hausdorff distances between objects.

These are the loops of :mod:`podium.metrics.object_segmentation` that NumPy can only
express as many whole-image passes or large batches. The passes read every pixel once
or twice, in raster order; the distances visit candidate points and boundary rows
(:func:`directed_squared`). All are exact (integers only). Compiled on first use
(:func:`podium.accel.jit.compiled`).

Each kernel states its preconditions; those called from Python check theirs at entry, outside
their pixel loops (a ``ValueError`` naming the kernel), and the helpers they call are given only
what those checks allow. A check that needs the codes of every pixel is made where a loop
visits only a few of them anyway: at the start of each run of one code in a row.

Definitions (as in :class:`~podium.metrics.object_segmentation._Side`):

- the 4-boundary of an object: its pixels with a 4-neighbour outside the object
  or outside the image;
- the 8-boundary: its pixels with an 8-neighbour outside the object or outside
  the image (the 4-boundary is part of it);
- the octagon: max and min over its pixels of ``y``, ``x``, ``y + x`` and ``y - x``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from podium.accel.jit import compiled

ON_EDGE4, ON_EDGE8 = 1, 2  # the bits of the flag image
SPREAD_VISITS = 256  # points :func:`_farthest_squared` visits spread out before the rest in raster order


@compiled
def renumber(
    labels: NDArray[np.integer], table_size: int
) -> tuple[NDArray[np.int32], int]:  # pragma: no cover - compiled
    """Labels renumbered 1..n in label order, 0 kept for background; ``table_size`` > every label.
    Labels that are already 0..n (or 1..n) are only widened. Checked: ``table_size >= 1`` and
    every label in ``0..table_size - 1`` (one vectorized pass).

    >>> codes, n = renumber(np.array([[0, 7], [3, 7]], dtype=np.uint16), 8)
    >>> codes.tolist(), n
    ([[0, 2], [1, 2]], 2)
    """
    if table_size < 1 or (labels.size and (labels.min() < 0 or labels.max() >= table_size)):
        raise ValueError("renumber: every label must be in 0..table_size - 1")
    table = np.zeros(table_size, np.int32)
    height, width = labels.shape
    for i in range(height):
        row = labels[i]
        for j in range(width):
            table[row[j]] = 1
    table[0] = 0
    n = 0
    unchanged = True
    for value in range(table_size):
        if table[value]:
            n += 1
            table[value] = n
            unchanged &= n == value
    codes = np.empty((height, width), np.int32)
    for i in range(height):
        row, out = labels[i], codes[i]
        if unchanged:  # a loop without lookups, which the compiler vectorizes
            for j in range(width):
                out[j] = row[j]
        else:
            for j in range(width):
                out[j] = table[row[j]]
    return codes, n


@compiled
def _marked(marks: NDArray[np.uint8], size: int, positions: NDArray[np.int64]) -> int:  # pragma: no cover - compiled
    """Writes the indices of the nonzero bytes of ``marks[:size]`` to ``positions``, in order, and
    returns how many there are. Eight zero bytes are skipped at once. Checked: ``marks.size`` is a
    multiple of 8, ``0 <= size <= marks.size`` and ``positions`` has room for ``size``.

    >>> positions = np.empty(16, np.int64)
    >>> m = _marked(np.array([0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1], np.uint8), 15, positions)
    >>> positions[:m].tolist()
    [1, 14]
    """
    if marks.size % 8 or size < 0 or size > marks.size or positions.size < size:
        raise ValueError("_marked: marks must be whole words holding size bytes, positions room for them")
    words = marks.view(np.uint64)
    m = 0
    for w in range((size + 7) // 8):
        if words[w]:
            for j in range(8 * w, min(8 * w + 8, size)):
                if marks[j]:
                    positions[m] = j
                    m += 1
    return m


@compiled
def _row_marks(width: int) -> tuple[NDArray[np.uint8], NDArray[np.int64]]:  # pragma: no cover - compiled
    """A zeroed buffer of marks for one row and the sentinel after it (:func:`_marked`), and room for
    their positions. ``width >= 0`` (NumPy refuses a negative size)."""
    return np.zeros((width + 8) // 8 * 8, np.uint8), np.empty((width + 8) // 8 * 8, np.int64)


_RUN_START = 4  # a mark of :func:`object_shapes`: the pixel starts a run of one code in its row


@compiled
def object_shapes(
    codes: NDArray[np.int32], n: int
) -> tuple[
    NDArray[np.uint8],
    NDArray[np.int64],
    NDArray[np.int64],
    NDArray[np.int64],
    NDArray[np.int64],
    NDArray[np.int64],
    NDArray[np.int64],
]:  # pragma: no cover - compiled
    """One raster pass: the flag image (bits ``ON_EDGE4``, ``ON_EDGE8`` on object pixels), and per
    code 0..n the number of pixels, of 4-boundary and of 8-boundary pixels; per object
    1..n (row code - 1) its octagon ``[max y, min y, max x, min x, max y+x, min y+x, max y-x, min y-x]``;
    and the rows and columns of the 8-boundary pixels of all objects, in raster order.
    The octagon is taken over the 8-boundary only: a pixel p where ``v·p`` is largest, for a king
    move v, has ``p + v`` outside the object, so it is on the 8-boundary.

    Each row is marked first in loops without branches, which the compiler vectorizes: a
    pixel's edge bits, and whether it starts a run of one code. Only the marked pixels are then
    visited (:func:`_marked`): areas are summed from the runs' lengths, the boundary from its pixels.
    Checked: ``n >= 0``, and every code in ``0..n`` (at the start of each run, where the code is read).

    >>> flags, area, on4, on8, octagon, edge_y, edge_x = object_shapes(np.array([[1, 1, 1], [1, 1, 1], [1, 1, 1]], np.int32), 1)
    >>> flags.tolist(), area.tolist(), on4.tolist(), on8.tolist(), octagon.tolist(), edge_y.tolist(), edge_x.tolist()
    ([[3, 3, 3], [3, 0, 3], [3, 3, 3]], [0, 9], [0, 8], [0, 8], [[2, 0, 2, 0, 4, 0, 2, -2]], [0, 0, 0, 1, 1, 2, 2, 2], [0, 1, 2, 0, 2, 0, 1, 2])
    """
    if n < 0:
        raise ValueError("object_shapes: n must be at least 0")
    height, width = codes.shape
    flags = np.zeros((height, width), np.uint8)
    area = np.zeros(n + 1, np.int64)
    on4 = np.zeros(n + 1, np.int64)
    on8 = np.zeros(n + 1, np.int64)
    octagon = np.empty((n, 8), np.int64)
    edge_y, edge_x, row_x = (
        np.empty(64, np.int64),
        np.empty(64, np.int64),
        np.empty(width, np.int64),
    )  # all of them; one row's
    marks, positions = _row_marks(width)
    same_column = np.zeros(width, np.uint8)  # the pixels above and below have the pixel's code
    size = 0
    for k in range(n):
        octagon[k, 0::2] = np.iinfo(np.int64).min
        octagon[k, 1::2] = np.iinfo(np.int64).max
    both = ON_EDGE4 | ON_EDGE8
    for i in range(height if width else 0):  # an image without columns has no pixel to read
        above, row, below = codes[max(i - 1, 0)], codes[i], codes[min(i + 1, height - 1)]
        for j in range(width):  # none in the border rows: every object pixel there is on both boundaries
            same_column[j] = (above[j] == row[j]) & (below[j] == row[j]) & (0 < i < height - 1)
        marks[0] = _RUN_START | both * (row[0] != 0)
        for j in range(1, width - 1):
            same_left = row[j - 1] == row[j]
            inner4 = same_left & (row[j + 1] == row[j]) & (same_column[j] == 1)
            inner8 = inner4 & (same_column[j - 1] == 1) & (same_column[j + 1] == 1)
            marks[j] = ((1 - inner4) * ON_EDGE4 + (1 - inner8) * ON_EDGE8) * (row[j] != 0) + (
                1 - same_left
            ) * _RUN_START
        if width > 1:
            marks[width - 1] = both * (row[width - 1] != 0) + (row[width - 2] != row[width - 1]) * _RUN_START
        marks[width] = _RUN_START  # the sentinel: the end of the row's last run
        m, run_code, run_start = 0, 0, 0
        for p in range(_marked(marks, width + 1, positions)):
            j = positions[p]
            mark = marks[j]
            if mark & _RUN_START:
                area[run_code] += j - run_start
                if j == width:
                    break
                run_code, run_start = row[j], j
                if run_code < 0 or run_code > n:
                    raise ValueError("object_shapes: every code must be in 0..n")
            edge = mark & both
            if edge == 0:
                continue
            c = row[j]
            flags[i, j] = edge
            row_x[m] = j
            m += 1
            on8[c] += 1
            if edge & ON_EDGE4:
                on4[c] += 1
            o = octagon[c - 1]
            for side, v in enumerate((i, j, i + j, i - j)):
                if v > o[2 * side]:
                    o[2 * side] = v
                if v < o[2 * side + 1]:
                    o[2 * side + 1] = v
        if size + m > edge_y.size:
            edge_y, edge_x = _grown(edge_y, 2 * (size + m), size), _grown(edge_x, 2 * (size + m), size)
        edge_y[size : size + m] = i
        edge_x[size : size + m] = row_x[:m]
        size += m
    area[0] = 0  # the background's runs were summed too
    return flags, area, on4, on8, octagon, edge_y[:size].copy(), edge_x[:size].copy()


@compiled
def group_edges(
    codes: NDArray[np.int32],
    flags: NDArray[np.uint8],
    edge_y: NDArray[np.int64],
    edge_x: NDArray[np.int64],
    start4: NDArray[np.int64],
    start8: NDArray[np.int64],
    y4: NDArray[np.signedinteger],
    x4: NDArray[np.signedinteger],
    y8: NDArray[np.signedinteger],
    x8: NDArray[np.signedinteger],
) -> None:  # pragma: no cover - compiled
    """A counting sort by code of the 8-boundary pixels ``edge_y, edge_x`` (raster order, from
    :func:`object_shapes`): fills ``y8, x8`` (8-boundary) and ``y4, x4`` (4-boundary), object k+1 in
    rows ``start8[k]:start8[k + 1]`` and ``start4[k]:start4[k + 1]``, in raster order within each.

    Checked at entry: one shape for ``codes`` and ``flags``; ``start4`` and ``start8`` of one size;
    as many 8-boundary pixels as ``start8`` counts and room for what ``start4`` and ``start8``
    count; every pixel inside the image. Then per pixel (they are few: boundaries only): its code
    is an object's, and that object's rows are not yet full."""
    n = start8.size - 1
    if (
        n < 0
        or start4.size != n + 1
        or flags.shape != codes.shape
        or edge_x.size != edge_y.size
        or edge_y.size != start8[n]
        or y8.size != start8[n]
        or x8.size != start8[n]
        or y4.size != start4[n]
        or x4.size != start4[n]
    ):
        raise ValueError("group_edges: the sizes of the boundary arrays disagree")
    if edge_y.size and (
        edge_y.min() < 0 or edge_y.max() >= codes.shape[0] or edge_x.min() < 0 or edge_x.max() >= codes.shape[1]
    ):
        raise ValueError("group_edges: a boundary pixel is outside the image")
    at4, at8 = start4[:n].copy(), start8[:n].copy()
    for e in range(edge_y.size):
        i, j = edge_y[e], edge_x[e]
        c = codes[i, j] - 1
        if c < 0 or c >= n or at8[c] >= start8[c + 1] or (flags[i, j] & ON_EDGE4 and at4[c] >= start4[c + 1]):
            raise ValueError(
                "group_edges: a boundary pixel's code is not an object's, or its object has more than counted"
            )
        y8[at8[c]], x8[at8[c]] = i, j
        at8[c] += 1
        if flags[i, j] & ON_EDGE4:
            y4[at4[c]], x4[at4[c]] = i, j
            at4[c] += 1


@compiled
def _spread_step(n: int) -> int:  # pragma: no cover - compiled
    """A step coprime with ``n`` near ``0.618 n``: ``k * step % n`` visits 0..n-1 once each, spread out (any ``n >= 0``)."""
    step = max(1, int(n * 0.6180339887498949 + 0.5))
    while True:
        a, b = step, n
        while b:
            a, b = b, a % b
        if a == 1:
            return step
        step += 1


@compiled
def directed_squared(
    a_codes: NDArray[np.int64],
    b_codes: NDArray[np.int64],
    own_codes: NDArray[np.int32],
    own_flags: NDArray[np.uint8],
    own_y8: NDArray[np.signedinteger],
    own_x8: NDArray[np.signedinteger],
    own_start8: NDArray[np.int64],
    own_extremes: NDArray[np.int64],
    other_codes: NDArray[np.int32],
    other_y4: NDArray[np.signedinteger],
    other_x4: NDArray[np.signedinteger],
    other_start4: NDArray[np.int64],
    other_octagon: NDArray[np.int64],
    work_left: float,
) -> tuple[NDArray[np.int64], int]:  # pragma: no cover - compiled
    """``max over a in A of min over b in B |a - b|²`` for each pair (A = own object ``a_codes[k]``,
    B = other object ``b_codes[k]``), and the work done: pixels visited plus distances evaluated.
    Stops as soon as the work passes ``work_left`` (the values are then incomplete).

    The candidates to be farthest are the pixels of A outside B that are on A's 8-boundary
    or strictly inside B's octagon; see :func:`podium.metrics.object_segmentation._directed_squared`
    for why no other can be. The inner ones are found by scanning, within A's box, each row of
    the octagon's interior between the columns its eight sides allow (marked in a vectorized
    loop, then collected by :func:`_marked`). Their distance to B is
    that to B's nearest 4-boundary pixel (:func:`_farthest_squared`).

    Checked at entry: the images of one shape; ``a_codes`` and ``b_codes`` of one size, objects
    of their sides; the boundary arrays as long as their starts count; A's boxes and
    boundary pixels inside the image (:class:`~podium.metrics.object_segmentation._Side` builds
    them all from one image each).
    """
    n_own, n_other = own_start8.size - 1, other_start4.size - 1
    height, width = own_codes.shape
    if (
        own_flags.shape != own_codes.shape
        or other_codes.shape != own_codes.shape
        or a_codes.size != b_codes.size
        or n_own < 0
        or n_other < 0
        or own_extremes.shape[0] < n_own
        or own_extremes.shape[1] != 4
        or other_octagon.shape[0] < n_other
        or other_octagon.shape[1] != 8
        or own_y8.size != own_start8[n_own]
        or own_x8.size != own_y8.size
        or other_y4.size != other_start4[n_other]
        or other_x4.size != other_y4.size
    ):
        raise ValueError("directed_squared: the shapes and sizes of the two sides disagree")
    if a_codes.size and (a_codes.min() < 1 or a_codes.max() > n_own or b_codes.min() < 1 or b_codes.max() > n_other):
        raise ValueError("directed_squared: a code is not an object of its side")
    if n_own and (
        own_extremes[:n_own, 0].min() < 0
        or own_extremes[:n_own, 1].max() >= height
        or own_extremes[:n_own, 2].min() < 0
        or own_extremes[:n_own, 3].max() >= width
    ):
        raise ValueError("directed_squared: an object's box is outside the image")
    if own_y8.size and (own_y8.min() < 0 or own_y8.max() >= height or own_x8.min() < 0 or own_x8.max() >= width):
        raise ValueError("directed_squared: a boundary pixel is outside the image")
    out = np.zeros(a_codes.size, np.int64)
    work = 0
    buffer_y = np.empty(64, np.int64)
    buffer_x = np.empty(64, np.int64)
    marks, positions = _row_marks(own_codes.shape[1])
    for k in range(a_codes.size):
        a, b = a_codes[k], b_codes[k]
        ea, o = (
            own_extremes[a - 1],
            other_octagon[b - 1],
        )  # o: max y, min y, max x, min x, max y+x, min y+x, max y-x, min y-x
        top, bottom, left, right = (
            max(ea[0], o[1] + 1),
            min(ea[1], o[0] - 1),
            max(ea[2], o[3] + 1),
            min(ea[3], o[2] - 1),
        )
        first8, last8 = own_start8[a - 1], own_start8[a]
        capacity = (last8 - first8) + max(0, bottom - top + 1) * max(0, right - left + 1)
        if capacity > buffer_y.size:
            buffer_y, buffer_x = np.empty(2 * capacity, np.int64), np.empty(2 * capacity, np.int64)
        m = 0
        for r in range(first8, last8):
            py, px = own_y8[r], own_x8[r]
            if other_codes[py, px] != b:
                buffer_y[m], buffer_x[m] = py, px
                m += 1
        work += last8 - first8
        for py in range(top, bottom + 1):
            low = max(left, o[5] + 1 - py, py - o[6] + 1)  # o[5] < py + px, py - px < o[6]
            high = min(right, o[4] - 1 - py, py - o[7] - 1)  # py + px < o[4], o[7] < py - px
            if high < low:
                continue
            work += high - low + 1
            codes_a, flags_a, codes_b = (
                own_codes[py, low : high + 1],
                own_flags[py, low : high + 1],
                other_codes[py, low : high + 1],
            )
            for t in range(high - low + 1):  # without branches, on row slices: vectorized
                marks[t] = (
                    (codes_a[t] == a) & (flags_a[t] == 0) & (codes_b[t] != b)
                )  # inside A, off its 8-boundary, outside B
            for p in range(_marked(marks, high - low + 1, positions)):
                buffer_y[m], buffer_x[m] = py, low + positions[p]
                m += 1
        b_first, b_last = other_start4[b - 1], other_start4[b]
        out[k], scanned = _farthest_squared(
            buffer_y[:m], buffer_x[:m], other_y4[b_first:b_last], other_x4[b_first:b_last]
        )
        work += scanned
        if work > work_left:
            break
    return out, work


@compiled
def _farthest_squared(
    y: NDArray[np.int64], x: NDArray[np.int64], by: NDArray[np.signedinteger], bx: NDArray[np.signedinteger]
) -> tuple[int, int]:  # pragma: no cover - compiled
    """``max over points p of min over boundary pixels q |p - q|²`` (0 without points), and the
    distances evaluated. ``by, bx``: B's 4-boundary in raster order, so ``by`` is sorted.

    With ``f`` the largest distance found so far and ``r = ⌊√f⌋``, a point cannot raise ``f``
    iff some boundary pixel lies within ``f`` of it, and any such pixel lies in the rows
    ``y ± r``: those rows are searched, nearest rows first, and the search stops at the
    first such pixel (early break, after Taha & Hanbury 2015). Only when none is found is
    the whole boundary measured, and that point's distance (then above ``f``) becomes ``f``.
    The first :data:`SPREAD_VISITS` points are visited in a spread order (:func:`_spread_step`),
    so that ``f`` rises early and few points need the whole boundary; the others in their own
    order, raster order, each tried first against the boundary pixel that stopped the search for
    the point before (a neighbour, usually: then one distance suffices). Exact: integers only.
    Checked: ``y`` and ``x`` of one size, ``by`` and ``bx`` too; ``by`` sorted is the caller's
    promise (:func:`directed_squared` passes rows of :func:`group_edges`, in raster order).

    >>> y, x = np.array([0, 5, 9]), np.array([0, 0, 0])
    >>> _farthest_squared(y, x, np.array([0, 1]), np.array([3, 3]))[0]  # (9 - 1)² + 3²
    73
    """
    m, nb = y.size, by.size
    if x.size != m or bx.size != nb:
        raise ValueError("_farthest_squared: coordinates of unequal lengths")
    if not m or not nb:
        return 0, 0
    top, rows = by[0], by[nb - 1] - by[0] + 2
    # first[r - top]: B's first pixel in row r or below; a table when it pays for itself, else binary searches
    first = np.searchsorted(by, np.arange(top, top + rows)) if 8 * m > rows else np.empty(0, np.int64)
    step, spread = _spread_step(m), min(m, SPREAD_VISITS)
    seen = np.zeros(m if m > spread else 0, np.bool_)
    i = r = 0
    farthest = work = reach = 0
    hit = 0  # the boundary pixel that stopped the last search
    for k in range(m):
        if k < spread:  # spread out
            p = i
            if seen.size:
                seen[p] = True
            i = i + step - m if i + step >= m else i + step
        else:  # the rest, in raster order
            while seen[r]:
                r += 1
            p = r
            r += 1
        py, px = y[p], x[p]
        if farthest:
            dy, dx = py - by[hit], px - bx[hit]
            work += 1
            if dy * dy + dx * dx <= farthest:
                continue
            low, down, high = (
                _at_row(by, first, top, py - reach),
                _at_row(by, first, top, py),
                _at_row(by, first, top, py + reach + 1),
            )
            up = down - 1
            within = False
            while not within and (up >= low or down < high):
                for j in (down, up):
                    if low <= j < high:
                        dy, dx = py - by[j], px - bx[j]
                        work += 1
                        if dy * dy + dx * dx <= farthest:
                            within, hit = True, j
                            break
                down += 1
                up -= 1
            if within:
                continue
        nearest = np.iinfo(np.int64).max
        for j in range(nb):
            dy, dx = py - by[j], px - bx[j]
            if dy * dy + dx * dx < nearest:
                nearest, hit = dy * dy + dx * dx, j
        work += nb
        farthest = nearest
        reach = int(np.sqrt(farthest))  # ⌊√f⌋, corrected for rounding
        while reach * reach > farthest:
            reach -= 1
        while (reach + 1) * (reach + 1) <= farthest:
            reach += 1
    return farthest, work


@compiled
def _at_row(
    by: NDArray[np.signedinteger], first: NDArray[np.int64], top: int, row: int
) -> int:  # pragma: no cover - compiled
    """The index of the first of the row-sorted ``by`` in ``row`` or below: from the table ``first``
    (rows from ``top``) when there is one, else by binary search. Any ``row``: the table is read clamped."""
    if first.size:
        return int(first[min(max(row - top, 0), first.size - 1)])
    return int(np.searchsorted(by, row))


@compiled
def overlaps(
    s_codes: NDArray[np.int32], g_codes: NDArray[np.int32], s_n: int, g_n: int
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:  # pragma: no cover - compiled
    """Pairs (S code, G code) of objects that share pixels, in increasing order, and how many they share.

    One raster pass over both images lists runs of pixels with the same pair (few: a pair
    changes only where a boundary is crossed): each row marks where either code changes, in a
    vectorized loop, and only those pixels are visited (:func:`_marked`). The runs are then grouped by S code, and each S
    object's counts go to a table over G's codes of which only the entries it touched are read
    back and cleared: linear in pixels plus objects. Checked: the images of one shape,
    ``s_n, g_n >= 0``, and every code in ``0..s_n`` and ``0..g_n`` (at the start of each run).

    >>> [a.tolist() for a in overlaps(np.array([[1, 1], [0, 1]], np.int32), np.array([[2, 1], [0, 1]], np.int32), 1, 2)]
    [[1, 1], [1, 2], [2, 1]]
    """
    if s_codes.shape != g_codes.shape or s_n < 0 or g_n < 0:
        raise ValueError("overlaps: images of one shape and code counts of at least 0 are required")
    height, width = s_codes.shape
    keys, lengths = np.empty(64, np.int64), np.empty(64, np.int64)
    row_keys, row_lengths = np.empty(width + 1, np.int64), np.empty(width + 1, np.int64)  # one row's runs
    marks, positions = _row_marks(width)
    size = 0
    for i in range(height):
        s_row, g_row = s_codes[i], g_codes[i]
        marks[0] = 1
        for j in range(1, width):  # without branches: vectorized
            marks[j] = (s_row[j] != s_row[j - 1]) | (g_row[j] != g_row[j - 1])
        marks[width] = 1  # the sentinel: the end of the row's last run
        m, run_key, run_start = 0, np.int64(0), 0
        for p in range(_marked(marks, width + 1, positions)):
            j = positions[p]
            if run_key:
                row_keys[m], row_lengths[m] = run_key, j - run_start
                m += 1
            if j == width:
                break
            s, g = s_row[j], g_row[j]
            if s < 0 or s > s_n or g < 0 or g > g_n:
                raise ValueError("overlaps: every code must be in 0..s_n and 0..g_n")
            run_key, run_start = (np.int64(s) * (g_n + 1) + g if (s != 0) & (g != 0) else np.int64(0)), j
        if size + m > keys.size:
            keys, lengths = _grown(keys, 2 * (size + m), size), _grown(lengths, 2 * (size + m), size)
        keys[size : size + m] = row_keys[:m]
        lengths[size : size + m] = row_lengths[:m]
        size += m
    # Runs grouped by S code (a counting sort), then each S object's counts summed in a table over G's codes.
    s_of = keys[:size] // (g_n + 1)
    start = np.zeros(s_n + 2, np.int64)
    for r in range(size):
        start[s_of[r] + 1] += 1
    start = np.cumsum(start)
    at, order = start[:-1].copy(), np.empty(size, np.int64)
    for r in range(size):
        order[at[s_of[r]]] = r
        at[s_of[r]] += 1
    table, touched = np.zeros(g_n + 1, np.int64), np.empty(g_n + 1, np.int64)
    pair_s, pair_g, count = np.empty(size, np.int64), np.empty(size, np.int64), np.empty(size, np.int64)
    m = 0
    for code in range(1, s_n + 1):
        t = 0
        for r in order[start[code] : start[code + 1]]:
            g = keys[r] % (g_n + 1)
            if table[g] == 0:
                touched[t] = g
                t += 1
            table[g] += lengths[r]
        for g in np.sort(touched[:t]):
            pair_s[m], pair_g[m], count[m] = code, g, table[g]
            table[g] = 0
            m += 1
    return pair_s[:m].copy(), pair_g[:m].copy(), count[:m].copy()


@compiled
def _grown(values: NDArray[np.int64], size: int, used: int) -> NDArray[np.int64]:  # pragma: no cover - compiled
    """A copy of ``values`` with room for ``size``, its first ``used`` kept; checked: ``0 <= used <= min(size, values.size)``."""
    if used < 0 or used > size or used > values.size:
        raise ValueError("_grown: used must fit both arrays")
    out = np.empty(size, np.int64)
    out[:used] = values[:used]
    return out
