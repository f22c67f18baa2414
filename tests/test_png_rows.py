"""The plain-PNG decoder of label images against libpng: same pixels, or it leaves the file to libpng."""

from __future__ import annotations

import io
import itertools
import logging
import struct
import zlib

import imagecodecs
import numpy as np
import pytest
from PIL import Image

from podium.formats import png
from podium.formats.png_rows import decode_gray


def _paeth(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    p = a + b - c
    pa, pb, pc = np.abs(p - a), np.abs(p - b), np.abs(p - c)
    return np.where((pa <= pb) & (pa <= pc), a, np.where(pb <= pc, b, c))


def _filtered(row: np.ndarray, above: np.ndarray, kind: int, step: int) -> np.ndarray:
    """One row filtered as the PNG specification says (section 9), from its bytes and the row above's
    (a type above 4, which no decoder accepts, is stored unfiltered)."""
    x, b = row.astype(np.int64), above.astype(np.int64)
    a = np.concatenate([np.zeros(step, np.int64), x[:-step]])
    c = np.concatenate([np.zeros(step, np.int64), b[:-step]])
    predictor = [np.zeros_like(x), a, b, (a + b) // 2, _paeth(a, b, c)][kind] if kind <= 4 else 0
    return ((x - predictor) % 256).astype(np.uint8)


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def encode(
    pixels: np.ndarray, filters: list[int], extra: tuple[bytes, ...] = (), idat_pieces: int = 1, interlace: int = 0
) -> bytes:
    """A grayscale PNG of ``pixels`` (uint8 or uint16) with the given filter type on each row."""
    height, width = pixels.shape
    depth = pixels.dtype.itemsize * 8
    data = pixels.astype(">u2").view(np.uint8).reshape(height, -1) if depth == 16 else pixels
    step = depth // 8
    above = np.zeros(data.shape[1], np.uint8)
    lines = []
    for row, kind in zip(data, filters, strict=True):
        lines.append(bytes([kind]) + _filtered(row, above, kind, step).tobytes())
        above = row
    stream = zlib.compress(b"".join(lines), 9)
    cut = np.linspace(0, len(stream), idat_pieces + 1).astype(int)
    header = _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, depth, 0, 0, 0, interlace))
    idat = b"".join(_chunk(b"IDAT", stream[i:j]) for i, j in itertools.pairwise(cut))
    return png.SIGNATURE + header + b"".join(extra) + idat + _chunk(b"IEND", b"")


def labels(rng: np.random.Generator, shape: tuple[int, int], dtype: type) -> np.ndarray:
    """Runs of labels, as a label image has, with some noise so every filter meets every case."""
    top = 255 if dtype == np.uint8 else 65535
    image = np.repeat(rng.integers(0, top + 1, size=(shape[0], shape[1] // 4 + 1)), 4, axis=1)[:, : shape[1]]
    noise = rng.random(shape) < 0.2
    image[noise] = rng.integers(0, top + 1, size=int(noise.sum()))
    return image.astype(dtype)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_every_filter_gives_the_pixels_libpng_gives(dtype: type) -> None:
    rng = np.random.default_rng(7)
    for _ in range(150):
        shape = (int(rng.integers(1, 12)), int(rng.integers(1, 40)))
        pixels = labels(rng, shape, dtype)
        data = encode(pixels, rng.integers(0, 5, size=shape[0]).tolist(), idat_pieces=int(rng.integers(1, 4)))
        decoded = decode_gray(data, png.parse_header(data))
        assert decoded is not None and decoded.dtype == dtype
        assert np.array_equal(decoded, pixels)
        assert np.array_equal(decoded, imagecodecs.png_decode(data))


def test_files_written_by_pillow_and_ancillary_chunks() -> None:
    rng = np.random.default_rng(8)
    pixels = labels(rng, (30, 50), np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, "PNG", optimize=True)
    data = buffer.getvalue()
    assert np.array_equal(decode_gray(data, png.parse_header(data)), pixels)
    # gamma, significant bits, a transparent gray value and text change nothing in the values
    extra = (
        _chunk(b"gAMA", struct.pack(">I", 45455)),
        _chunk(b"sBIT", b"\x04"),
        _chunk(b"tRNS", b"\x00\x07"),
        _chunk(b"tEXt", b"a\0b"),
    )
    data = encode(pixels, [1] * 30, extra=extra)
    decoded = decode_gray(data, png.parse_header(data))
    assert decoded is not None and np.array_equal(decoded, pixels)
    assert np.array_equal(png.decode(data, png.parse_header(data)), pixels)


def test_other_files_are_left_to_libpng() -> None:
    pixels = np.arange(24, dtype=np.uint8).reshape(4, 6)
    good = encode(pixels, [0, 1, 2, 3])
    header = png.parse_header(good)
    iend = good.rindex(b"IEND") - 4
    first_idat = good.index(b"IDAT") - 4
    cases = {
        "interlaced": encode(pixels, [0] * 4, interlace=1),
        "a bad filter type": encode(pixels, [0, 5, 0, 0]),
        "a wrong CRC": good[:-1] + bytes([good[-1] ^ 1]),
        "no IEND": good[:iend],
        "a chunk cut short": good[: iend - 3],
        "IDAT chunks apart": _split_idat(encode(pixels, [0] * 4, idat_pieces=2)),
        "a palette in a gray image": good[:first_idat] + _chunk(b"PLTE", b"\0\0\0") + good[first_idat:],
        "an unknown critical chunk": good[:first_idat] + _chunk(b"ABCD", b"") + good[first_idat:],
        "too few rows": _with_stream(good, zlib.compress(b"\0" * 7 * 3)),
        "too many rows": _with_stream(good, zlib.compress(b"\0" * 7 * 5)),
        "no image data": good[:first_idat] + _chunk(b"IEND", b""),
    }
    for why, data in cases.items():
        assert decode_gray(data, header if why != "interlaced" else png.parse_header(data)) is None, why


def _split_idat(data: bytes) -> bytes:
    """The second IDAT chunk moved after a text chunk."""
    second = data.index(b"IDAT", data.index(b"IDAT") + 4) - 4
    return data[:second] + _chunk(b"tEXt", b"a\0b") + data[second:]


def _with_stream(data: bytes, stream: bytes) -> bytes:
    start = data.index(b"IDAT") - 4
    end = data.index(b"IEND") - 4
    return data[:start] + _chunk(b"IDAT", stream) + data[end:]


def _crcs_made_right(data: bytes) -> bytes:
    """``data`` with every whole chunk's CRC recomputed, so that a damage reaches the checks after it."""
    out, at = bytearray(data), 8
    while at + 12 <= len(out):
        length = struct.unpack_from(">I", out, at)[0]
        if at + 12 + length > len(out):
            break
        struct.pack_into(">I", out, at + 8 + length, zlib.crc32(out[at + 4 : at + 8 + length]))
        at += 12 + length
    return bytes(out)


def damaged(rng: np.random.Generator, good: bytes) -> bytes:
    """``good`` with one to three bytes changed past the signature (every CRC made right again, so that
    the damage reaches the checks after it), or, one time in seven or so, cut short."""
    data = bytearray(good)
    if rng.random() < 0.85:
        for at in rng.integers(16, len(data), size=int(rng.integers(1, 4))):
            data[int(at)] = int(rng.integers(0, 256))
        return _crcs_made_right(bytes(data))
    return bytes(data[: int(rng.integers(33, len(data)))])


def _critical_only(data: bytes) -> bytes:
    """``data`` without its ancillary chunks (which give no pixels: a damaged text chunk makes imagecodecs
    raise over libpng's warning about it, although the pixels decode)."""
    out, at = bytearray(data[:8]), 8
    while at + 12 <= len(data):
        length, kind = struct.unpack_from(">I4s", data, at)
        if not kind[0] & 0x20 or at + 12 + length > len(data):
            out += data[at : at + 12 + length]
        at += 12 + length
    return bytes(out + data[at:])


def test_damaged_copies_give_libpng_pixels_or_nothing() -> None:
    """Bytes changed anywhere (CRCs made right again) or the file cut: whenever pixels come out,
    libpng decodes the file's critical chunks to the same; whenever libpng refuses those, no pixels come out."""
    rng = np.random.default_rng(9)
    outcomes = {"same pixels": 0, "left to libpng": 0}
    for trial in range(1500):
        dtype = np.uint8 if trial % 2 else np.uint16
        pixels = labels(rng, (int(rng.integers(1, 10)), int(rng.integers(1, 20))), dtype)
        good = encode(
            pixels, rng.integers(0, 5, size=pixels.shape[0]).tolist(), extra=(_chunk(b"tEXt", b"k\0v"),), idat_pieces=2
        )
        data = damaged(rng, good)
        try:
            header = png.parse_header(bytes(data))
        except png.ImageError:
            continue
        decoded = decode_gray(bytes(data), header)
        try:
            expected = imagecodecs.png_decode(_critical_only(bytes(data)))
        except Exception:
            assert decoded is None
            outcomes["left to libpng"] += 1
            continue
        if decoded is not None:
            assert np.array_equal(decoded, expected[..., 0] if expected.ndim == 3 else expected)
            outcomes["same pixels"] += 1
    assert min(outcomes.values()) > 100, outcomes


ADAM7 = [
    (0, 0, 8, 8),
    (0, 4, 8, 8),
    (4, 0, 8, 4),
    (0, 2, 4, 4),
    (2, 0, 4, 2),
    (0, 1, 2, 2),
    (1, 0, 2, 1),
]  # first row, column; steps


def encode_interlaced(pixels: np.ndarray) -> bytes:
    """A grayscale PNG of ``pixels`` interlaced by Adam7: seven passes of sub-images, rows unfiltered."""
    height, width = pixels.shape
    depth = pixels.dtype.itemsize * 8
    passes = [pixels[y::dy, x::dx] for y, x, dy, dx in ADAM7]
    raw = b"".join(
        b"\0" + row.astype(">u2" if depth == 16 else np.uint8).tobytes() for sub in passes if sub.size for row in sub
    )
    header = _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, depth, 0, 0, 0, 1))
    return png.SIGNATURE + header + _chunk(b"IDAT", zlib.compress(raw)) + _chunk(b"IEND", b"")


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_interlaced_pngs_decode_silently(dtype: type, caplog: pytest.LogCaptureFixture) -> None:
    """0.8.5 let libpng's "Interlace handling should be turned on" through imagecodecs' log, which
    Python prints on standard error, for each interlaced PNG."""
    pixels = labels(np.random.default_rng(3), (37, 23), dtype)
    data = encode_interlaced(pixels)
    with caplog.at_level(logging.DEBUG):
        assert np.array_equal(png.decode(data, png.parse_header(data)), pixels)
    assert not caplog.records


def _decoded_or_message(data: bytes, out: np.ndarray | None) -> np.ndarray | str:
    try:
        return png.decode(data, png.parse_header(data), out)
    except png.ImageError as exc:
        return exc.message


def test_decoding_into_a_buffer_gives_what_decoding_gives() -> None:
    """``png.decode(..., out=)`` (the fuzzy-jaccard reader's one buffer for every map): on files of
    every filter, interlaced, with a tRNS chunk (two channels: decoded without the buffer), of
    another size than the buffer, and damaged, the same pixels or the same message as without it."""
    rng = np.random.default_rng(11)
    outcomes = {"pixels": 0, "message": 0}
    for trial in range(600):
        shape = (int(rng.integers(1, 10)), int(rng.integers(1, 20)))
        pixels = labels(rng, shape, np.uint8)
        kind = trial % 4
        if kind == 0:
            data = encode(pixels, rng.integers(0, 5, size=shape[0]).tolist(), idat_pieces=2)
        elif kind == 1:
            data = encode_interlaced(pixels)
        else:
            buffer = io.BytesIO()
            Image.fromarray(pixels).save(buffer, "PNG", **({"transparency": 3} if kind == 2 else {}))
            data = buffer.getvalue()
        if rng.random() < 0.5:
            damaged = bytearray(data)
            for at in rng.integers(16, len(damaged), size=int(rng.integers(1, 4))):
                damaged[int(at)] = int(rng.integers(0, 256))
            data = _crcs_made_right(bytes(damaged)) if rng.random() < 0.7 else bytes(damaged[: len(damaged) // 2])
        try:
            png.parse_header(data)
        except png.ImageError:
            continue
        expected = _decoded_or_message(data, None)
        other = (shape[0] + 1, shape[1]) if trial % 7 == 0 else shape
        out = np.full(other, 77, np.uint8)
        got = _decoded_or_message(data, out)
        if isinstance(expected, str):
            assert got == expected
            outcomes["message"] += 1
        else:
            assert isinstance(got, np.ndarray) and got.dtype == expected.dtype and np.array_equal(got, expected)
            assert got is out or other != shape or expected.ndim == 3 or b"tRNS" in data
            outcomes["pixels"] += 1
    assert min(outcomes.values()) > 50, outcomes
