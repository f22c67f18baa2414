"""The compiled PNG rows (podium.formats._png_sums) against libpng and against the pure path: the same
pixels and sums, or the file left to libpng; hostile sizes refused without a read outside a buffer."""

from __future__ import annotations

import itertools
import re
import struct
import zlib
from pathlib import Path

import imagecodecs
import numpy as np
import pytest

from conftest import require
from podium.formats import png, png_rows, png_stream
from podium.scoring.engine import evaluate
from test_png_rows import _chunk, damaged, encode

built = pytest.mark.skipif(not png_stream.extension_built(), reason="podium.formats._png_sums is not built")
MAX_BLOCK_WIDTH = 1 << 18  # _png_sums.c: wider rows are decoded one at a time


def test_the_extension_is_built() -> None:
    """CI has a C compiler: the extension must have been built there (elsewhere, its absence is a skip)."""
    require(
        "the C extension podium.formats._png_sums",
        None if png_stream.extension_built() else "not built (pip install -e . builds it where a C compiler is)",
    )


def test_every_extension_is_declared_by_the_shared_header() -> None:
    """Each C source declares its module through src/podium/_extension.h (``PODIUM_MODULE``, or ``PODIUM_MODULE_OF``
    for several functions), none by a boilerplate of its own: a twin that missed the header's slots (loadable by
    subinterpreters with a GIL of their own, and by free-threaded builds) and its multi-phase initialisation."""
    sources = sorted(Path(png_stream.__file__).parents[1].rglob("*.c"))
    assert len(sources) >= 3, sources
    for source in sources:
        text = source.read_text()
        assert '#include "../_extension.h"' in text and "PyModuleDef " not in text, source
        assert re.search(r"^PODIUM_MODULE(_OF)?\(", text, re.MULTILINE), source


def _noise(rng: np.random.Generator, shape: tuple[int, int], dtype: type, top: int = 255) -> np.ndarray:
    """Smooth stretches and noise, so that every filter meets every Paeth case."""
    base = np.cumsum(rng.integers(-3, 4, size=shape), axis=1) + rng.integers(0, top + 1, size=(shape[0], 1))
    noisy = rng.random(shape) < 0.3
    base[noisy] = rng.integers(0, top + 1, size=int(noisy.sum()))
    return np.clip(base, 0, top).astype(dtype)


def _file(rng: np.random.Generator, pixels: np.ndarray) -> bytes:
    """``pixels`` as a PNG of random filters: any of the five on each row, or, one time in three, each
    block of 16 rows with None, Sub and Up only (decoded a row at a time) or with any."""
    height = pixels.shape[0]
    filters = rng.integers(0, 5, size=height)
    if rng.random() < 1 / 3:
        plain_blocks = np.repeat(rng.random(height // 16 + 1) < 0.5, 16)[:height]
        filters[plain_blocks] = rng.integers(0, 3, size=int(plain_blocks.sum()))
    return encode(pixels, filters.tolist(), idat_pieces=int(rng.integers(1, 4)))


@built
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_rows_of_every_filter_and_size_decode_as_libpng_and_the_pure_path_do(dtype: type) -> None:
    """Heights 1..40 cross the 16-row blocks' edges, widths 1..70 the 16-byte tiles'."""
    rng = np.random.default_rng(11)
    for _ in range(400):
        pixels = _noise(rng, (int(rng.integers(1, 41)), int(rng.integers(1, 71))), dtype, np.iinfo(dtype).max)
        data = _file(rng, pixels)
        header = png.parse_header(data)
        compiled = png_stream.decode_gray(data, header)
        pure = png_stream.decode_gray(data, header, unfilter=png_rows.unfilter)
        assert compiled is not None and compiled.dtype == dtype
        assert np.array_equal(compiled, pixels)
        assert np.array_equal(compiled, imagecodecs.png_decode(data))
        assert np.array_equal(compiled, pure)


@built
@pytest.mark.parametrize("width", [MAX_BLOCK_WIDTH, MAX_BLOCK_WIDTH + 1])
def test_rows_as_wide_as_a_block_takes_and_wider(width: int) -> None:
    rng = np.random.default_rng(width)
    pixels = _noise(rng, (3, width), np.uint8)
    data = encode(pixels, [4, 3, 1])
    assert np.array_equal(png_stream.decode_gray(data, png.parse_header(data)), pixels)
    truth = rng.integers(0, 3, size=pixels.shape).astype(np.uint8)
    assert png_stream.map_sums(data, png.parse_header(data), truth, 1, None, bytearray(3 * (width + 1))) == _sums(
        pixels, truth, 1, None
    )


def _sums(p: np.ndarray, truth: np.ndarray, value: int, roi: np.ndarray | None) -> tuple[int, int, int, int]:
    inside = np.ones(p.shape, bool) if roi is None else roi
    hit = (truth == value) & inside
    return int(hit.sum()), int(p[hit].sum(dtype=np.int64)), int(p[inside].sum(dtype=np.int64)), int(p.max())


@built
def test_map_sums_are_numpy_s_on_libpng_s_pixels() -> None:
    """Label truths of 8 and 16 bits and masks, with and without a region of interest; values up to
    255 (a map above 100 is the reader's to refuse: the largest value says so)."""
    rng = np.random.default_rng(12)
    for trial in range(300):
        shape = (int(rng.integers(1, 41)), int(rng.integers(1, 71)))
        pixels = _noise(rng, shape, np.uint8, 100 if trial % 3 else 255)
        data = _file(rng, pixels)
        kind = trial % 3
        truth = (
            rng.integers(0, 4, size=shape).astype(np.uint8)
            if kind == 0
            else rng.integers(0, 4, size=shape).astype(np.uint16) * 20_000
            if kind == 1
            else rng.random(shape) < 0.4
        )
        value = (1, 20_000, 1)[kind]
        roi = None if trial % 2 else rng.random(shape) < 0.7
        rows = bytearray(shape[0] * (shape[1] + 1))
        found = png_stream.map_sums(data, png.parse_header(data), truth, value, roi, rows)
        assert found == _sums(imagecodecs.png_decode(data), truth, value, roi)


@built
def test_damaged_maps_give_libpng_s_sums_or_nothing() -> None:
    """Bytes changed anywhere (CRCs made right again), the file cut, or the rows' bytes changed before
    compression (filter types above 4 among them): whenever sums come out, libpng decodes the file to
    pixels of those sums; whenever libpng refuses it, no sums come out."""
    rng = np.random.default_rng(13)
    outcomes = {"same sums": 0, "left to libpng": 0}
    for trial in range(1500):
        pixels = _noise(rng, (int(rng.integers(1, 20)), int(rng.integers(1, 30))), np.uint8, 100)
        data = _file(rng, pixels)
        if trial % 2:
            raw = bytearray(zlib.decompress(_idat(data)))
            for at in rng.integers(0, len(raw), size=int(rng.integers(1, 4))):
                raw[int(at)] = int(rng.integers(0, 256)) if rng.random() < 0.7 else int(rng.integers(0, 7))
            data = _with_stream(data, zlib.compress(bytes(raw)))
        else:
            data = damaged(rng, data)
        try:
            header = png.parse_header(data)
        except png.ImageError:
            continue
        truth = np.ones(header.shape, np.uint8)
        try:
            rows = bytearray(header.height * (header.width + 1))
            found = png_stream.map_sums(data, header, truth, 1, None, rows)
        except ValueError:  # a header of another size: the reader asks for the truth's
            continue
        try:
            expected = imagecodecs.png_decode(data)
        except Exception:
            assert found is None, trial
            outcomes["left to libpng"] += 1
            continue
        if found is not None:
            assert found == _sums(expected, truth, 1, None), trial
            outcomes["same sums"] += 1
    assert min(outcomes.values()) > 100, outcomes


@built
def test_files_libpng_might_refuse_are_left_to_it() -> None:
    pixels = np.arange(24, dtype=np.uint8).reshape(4, 6)
    good = encode(pixels, [4, 1, 2, 3])
    first_idat = good.index(b"IDAT") - 4
    stream = zlib.compress(b"".join(b"\0" + bytes(6) for _ in range(4)))
    small_window = bytes([0x08, 0x1D]) + stream[2:]  # CINFO 0: a 256-byte window, more than the rows' 28 bytes
    cases = {
        "a text chunk (strict)": good[:first_idat] + _chunk(b"tEXt", b"a\0b") + good[first_idat:],
        "a transparent gray value (strict)": good[:first_idat] + _chunk(b"tRNS", b"\0\7") + good[first_idat:],
        "interlaced": encode(pixels, [0] * 4, interlace=1),
        "a bad filter type": encode(pixels, [0, 5, 0, 0]),
        "16 bits": encode(pixels.astype(np.uint16), [0] * 4),
        "a row short": _with_stream(good, zlib.compress(b"\0" * (7 * 4 - 1))),
        "a row too many": _with_stream(good, zlib.compress(b"\0" * 7 * 5)),
        "no image data": good[:first_idat] + _chunk(b"IEND", b""),
    }
    truth = np.zeros((4, 6), np.uint8)
    for why, data in cases.items():
        header = png.parse_header(data)
        assert png_stream.map_sums(data, header, truth, 1, None, bytearray(4 * 7)) is None, why
    assert png_stream.decode_gray(_with_stream(good, small_window), png.parse_header(good)) is not None  # 28 <= 256


def _idat(data: bytes) -> bytes:
    """The joined IDAT chunks' content of ``data``."""
    found = png_stream.image_data(data)
    assert found is not None
    return found


def _with_stream(data: bytes, stream: bytes) -> bytes:
    start, end = data.index(b"IDAT") - 4, data.index(b"IEND") - 4
    return data[:start] + _chunk(b"IDAT", stream) + data[end:]


@built
def test_a_window_smaller_than_the_distances_is_left_to_libpng() -> None:
    """A zlib header declaring a 512-byte window over a stream reaching 900 bytes back: libdeflate
    inflates it, zlib (libpng) refuses it ("invalid distance too far back")."""
    rng = np.random.default_rng(14)
    block = rng.integers(0, 256, 900, dtype=np.uint8).tobytes()
    pixels = np.frombuffer((block * 2)[:1000] * 20, np.uint8).reshape(20, 1000)
    good = encode(pixels, [0] * 20)
    stream = zlib.compress(b"".join(b"\0" + row.tobytes() for row in pixels), 9)
    cmf = 0x18  # deflate, CINFO 1
    flg = stream[1] & 0xE0
    flg |= (31 - ((cmf << 8) | flg) % 31) % 31
    data = _with_stream(good, bytes([cmf, flg]) + stream[2:])
    with pytest.raises(Exception, match="too far back"):
        imagecodecs.png_decode(data)
    header = png.parse_header(data)
    assert png_stream.decode_gray(data, header) is None
    assert png_rows.decode_gray(data, header) is None  # the label images' reader (zlib-ng before) inflated it
    assert png_stream.map_sums(data, header, np.zeros((20, 1000), np.uint8), 1, None, bytearray(20 * 1001)) is None


@built
@pytest.mark.parametrize("shape", [(1, 1_000_001), (1_000_001, 1)])
def test_sides_past_libpng_s_limit_are_left_to_it(shape: tuple[int, int]) -> None:
    data = encode(np.zeros(shape, np.uint8), [0] * shape[0])
    with pytest.raises(Exception, match="IHDR"):
        imagecodecs.png_decode(data)
    assert png_rows.decode_gray(data, png.parse_header(data)) is None


@built
def test_hostile_sizes_are_refused_without_reading_outside_a_buffer() -> None:
    from podium.formats import _png_sums

    # Declared sizes the data does not fill: nothing inflates to them, libpng has the file.
    for width, height in ((7000, 7000), (1_000_001, 1), (1, 1_000_001), (50_000_000, 1)):
        header_only = png.SIGNATURE + _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
        data = header_only + _chunk(b"IDAT", zlib.compress(b"\0" * 100)) + _chunk(b"IEND", b"")
        assert png_stream.decode_gray(data, png.parse_header(data)) is None
    # The extension checks every length itself.
    raw, rows = bytes(2 * 4), bytearray(2 * 3)
    assert _png_sums.unfilter(raw, rows, 3, 1) is True
    bad_calls = {
        "raw a byte short": lambda: _png_sums.unfilter(raw[:-1], rows, 3, 1),
        "raw a byte long": lambda: _png_sums.unfilter(raw + b"\0", rows, 3, 1),
        "rows not whole rows": lambda: _png_sums.unfilter(raw, bytearray(5), 3, 1),
        "stride 0": lambda: _png_sums.unfilter(b"", bytearray(0), 0, 1),
        "stride + 1 overflowing": lambda: _png_sums.unfilter(b"", bytearray(0), 2**63 - 1, 1),
        "sums: width + 1 overflowing": lambda: _png_sums.class_sums(b"", 2**63 - 1, np.zeros(0, np.uint8), 1, None),
        "step 0": lambda: _png_sums.unfilter(raw, rows, 3, 0),
        "step past the row": lambda: _png_sums.unfilter(raw, rows, 3, 4),
        "step 9": lambda: _png_sums.unfilter(bytes(2 * 10), bytearray(18), 9, 9),
        "sums: width 0": lambda: _png_sums.class_sums(raw, 0, np.zeros((2, 3), np.uint8), 1, None),
        "sums: truth of another size": lambda: _png_sums.class_sums(raw, 3, np.zeros((2, 4), np.uint8), 1, None),
        "sums: roi of another size": lambda: _png_sums.class_sums(
            raw, 3, np.zeros((2, 3), np.uint8), 1, np.zeros(5, bool)
        ),
        "sums: truth of int32": lambda: _png_sums.class_sums(raw, 3, np.zeros((2, 3), np.int32), 1, None),
        "sums: a roi of uint16": lambda: _png_sums.class_sums(
            raw, 3, np.zeros((2, 3), np.uint8), 1, np.zeros((2, 3), np.uint16)
        ),
        "sums: rows overflowing Py_ssize_t": lambda: _png_sums.class_sums(
            raw, 2**62, np.zeros(2**0, np.uint8), 1, None
        ),
    }
    for why, call in bad_calls.items():
        with pytest.raises(ValueError):
            call()
            pytest.fail(why)
    with pytest.raises(TypeError):
        _png_sums.unfilter(raw, b"read-only", 3, 1)
    with pytest.raises(TypeError):
        _png_sums.class_sums(raw, 3, np.zeros((3, 2), np.uint8).T, 1, None)  # not C-contiguous
    assert _png_sums.unfilter(b"\5" + bytes(3) + bytes(4), rows, 3, 1) is False  # filter type 5
    assert _png_sums.class_sums(b"\0" + bytes(3) + b"\7" + bytes(3), 3, np.zeros((2, 3), np.uint8), 1, None) is None
    # An empty image has no rows to decode.
    assert _png_sums.unfilter(b"", bytearray(0), 3, 1) is True


@built
def test_the_pure_and_compiled_paths_give_one_result(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """fuzzy-jaccard on label truths of 8 and 16 bits and on class masks, good and damaged maps: the
    result documents (scores, details, problems and their messages) are equal with the extension
    and without it."""
    from test_challenge_fuzzy_jaccard import CLASSES, write_label_truth

    rng = np.random.default_rng(15)
    cases: list[tuple[Path, Path, dict[str, str]]] = []
    for n, dtype in enumerate((np.uint8, np.uint16)):
        images = {f"im{i}": rng.integers(0, 3, size=(int(rng.integers(20, 40)),) * 2).astype(dtype) for i in range(3)}
        truth = write_label_truth(tmp_path / f"truth{n}", images)
        sub = tmp_path / f"sub{n}"
        for (stem, labels), c in itertools.product(images.items(), CLASSES):
            pixels = _noise(rng, labels.shape, np.uint8, 100)
            (sub / c).mkdir(parents=True, exist_ok=True)
            (sub / c / f"{stem}.png").write_bytes(_file(rng, pixels))
        cases += [(truth, sub, {"roi": "union"}), (truth, sub, {"roi": "all"})]
    masks = tmp_path / "masks"
    for c, stem in itertools.product(CLASSES, ("im0", "im1", "im2")):
        (masks / c).mkdir(parents=True, exist_ok=True)
        labels_of_stem = np.asarray(imagecodecs.png_decode((tmp_path / "truth0" / f"{stem}.png").read_bytes()))
        mask = np.where(labels_of_stem == CLASSES.index(c) + 1, 100, 0).astype(np.uint8)
        (masks / c / f"{stem}.png").write_bytes(encode(mask, [4] * mask.shape[0]))
    cases.append((masks, tmp_path / "sub0", {}))
    damaged = tmp_path / "damaged"
    for c in CLASSES:
        (damaged / c).mkdir(parents=True)
    shape = png.parse_header((tmp_path / "truth0" / "im0.png").read_bytes()).shape
    above = _noise(rng, shape, np.uint8, 255)
    (damaged / CLASSES[0] / "im0.png").write_bytes(_file(rng, above))  # values above 100
    (damaged / CLASSES[1] / "im0.png").write_bytes(_file(rng, _noise(rng, shape, np.uint8, 100))[:-30])  # cut
    (damaged / CLASSES[0] / "im1.png").write_bytes(encode(np.zeros((3, 3), np.uint8), [0] * 3))  # another size
    (damaged / CLASSES[1] / "im1.png").write_bytes(
        _file(rng, _noise(rng, shape, np.uint8, 100)).replace(b"IEND", b"IEN")
    )
    (damaged / CLASSES[0] / "im2.png").write_bytes(
        encode(_noise(rng, shape, np.uint8, 100), [2] * shape[0], interlace=1)
    )
    for unreadable in ("reject", "zero"):
        cases.append((tmp_path / "truth0", damaged, {"unreadable": unreadable}))

    def results() -> list[dict]:
        return [evaluate("fuzzy-jaccard", truth, sub, settings).to_dict() for truth, sub, settings in cases]

    compiled = results()
    monkeypatch.setattr(png_stream, "_png_sums", None)
    pure = results()
    assert [r["status"] for r in compiled] == ["scored"] * 5 + ["rejected", "scored"]
    for one, other in zip(compiled, pure):
        one.pop("signature"), other.pop("signature")  # the time of the evaluation
        assert one == other
