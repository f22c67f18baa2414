"""PNG decoder candidates on the same files, side by side.

Decodes the same truth and submission files with each installed candidate
(Pillow, OpenCV, pyspng, imagecodecs, pywuffs, and podium's own way for plain grayscale files,
``podium.formats.png_rows``, with the C extension's loop and with Numba's), checks that every
candidate gives the same pixels, and prints the throughput (best of ``--repeats``, with the CPU
seconds). By default the files are the fuzzy-jaccard benchmark's probability maps (run
``benchmarks/fuzzy_jaccard_throughput.py`` first to build them); ``--data ../shared/data/glas-fixture`` decodes GlaS's label images instead.
``pip install -r benchmarks/requirements.txt`` for the optional candidates.
"""

from __future__ import annotations

import argparse
import io
from collections.abc import Callable
from pathlib import Path

import imagecodecs
import numpy as np
from PIL import Image
from timing import Timed, best_of, machine_header

import podium.scoring.kernels  # noqa: F401  (compiled kernels loaded before timing)
from podium.formats import png, png_rows, png_stream

HERE = Path(__file__).resolve().parent


def candidates() -> dict[str, Callable[[bytes], np.ndarray]]:
    found: dict[str, Callable[[bytes], np.ndarray]] = {
        "Pillow": lambda data: np.asarray(Image.open(io.BytesIO(data))),
        "imagecodecs (libpng)": imagecodecs.png_decode,
        "podium png_rows (libdeflate, the C extension)": lambda data: png_rows.decode_gray(
            data, png.parse_header(data)
        ),
        "podium png_rows (libdeflate, Numba)": lambda data: png_stream.decode_gray(
            data, png.parse_header(data), unfilter=png_rows.unfilter
        ),
    }
    try:
        import cv2

        cv2.setNumThreads(1)
        found["OpenCV"] = lambda data: cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)
    except ImportError:
        pass
    try:
        import pyspng

        found["pyspng (libspng)"] = pyspng.load
    except ImportError:
        pass
    try:
        from pywuffs import ImageDecoderType, PixelFormat
        from pywuffs.aux import ImageDecoder, ImageDecoderConfig

        config = ImageDecoderConfig()
        config.enabled_decoders = [ImageDecoderType.PNG]
        config.pixel_format = PixelFormat.Y
        decoder = ImageDecoder(config)
        found["pywuffs (Wuffs)"] = lambda data: decoder.decode(data).pixbuf[..., 0]
    except ImportError:
        pass
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=HERE / "data" / "fuzzy-jaccard")
    parser.add_argument("--files", type=int, default=100, help="how many files to decode")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    machine_header(args.repeats)
    paths = (
        sorted(args.data.glob("truth/*.png"))
        + sorted(args.data.glob("submission/*.png"))
        + sorted(args.data.glob("submission/*/*.png"))
    )
    if not paths:
        raise SystemExit(f"no PNG under {args.data}: run benchmarks/fuzzy_jaccard_throughput.py first")
    step = max(1, len(paths) // args.files)
    blobs = [p.read_bytes() for p in paths[::step][: args.files]]
    reference = [imagecodecs.png_decode(b) for b in blobs]
    megapixels = sum(r.size for r in reference) / 1e6
    print(f"{len(blobs)} files of {args.data}, {megapixels:.1f} MP, {sum(map(len, blobs)) / 1e6:.1f} MB\n")
    runs: dict[str, Timed[None]] = {}
    for name, decode in candidates().items():
        for blob, expected in zip(blobs, reference):
            assert np.array_equal(decode(blob), expected), f"{name} decodes differently"
        runs[name] = best_of(args.repeats, lambda decode=decode: _decode_all(decode, blobs), what=name)  # type: ignore[misc]
    print(f"{'decoder':32s} {'wall s':>8s} {'CPU s':>8s} {'MP/s':>8s} {'vs Pillow':>10s}")
    for name, run in runs.items():
        print(
            f"{name:32s} {run.wall:8.4f} {run.cpu:8.4f} {megapixels / run.wall:8.1f} {runs['Pillow'].wall / run.wall:9.2f}x"
        )


def _decode_all(decode: Callable[[bytes], np.ndarray], blobs: list[bytes]) -> None:
    for blob in blobs:
        decode(blob)


if __name__ == "__main__":
    main()
