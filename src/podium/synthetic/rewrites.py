"""A valid submission rewritten in another way its format allows, which must not change its score.

Each rewrite keeps every value the rules read: numbers written another way (``0.5``, ``0.50``,
``.5``, ``5e-1``, ``+0.5``; ``7`` as ``7.0`` where a label is read as a number), columns padded
with spaces and tabs, commas for blanks where the kit reads them so, Windows line ends, a
byte-order mark, trailing blank lines, photos in another order (camera traps),
cluster numbers changed consistently (a clustering is the same partition), class words for 0 and 1,
images encoded again (another compression, 16 bits, TIFF) or under another accepted suffix, and
the files sent as a .zip or a .tar.gz. :func:`rewrite` picks some at random, for the tests of
``tests/test_fuzzed_inputs.py`` and ``benchmarks/fuzz.py``.
"""

from __future__ import annotations

import io
import random
import re
import shutil
import tarfile
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
from PIL import Image

from podium.formats.label_images import read_label_image

NUMBER = re.compile(rb"(?<![\w.+-])([0-9]+)(?:\.([0-9]+))?(?![\w.])")  # an unsigned decimal or integer, alone


def rewrite(challenge: str, submission: Path, target: Path, rng: random.Random) -> tuple[list[str], Path]:
    """``submission`` (a file or a folder) rewritten into ``target`` by two or three rewrites its
    challenge's format allows; what was done, and the path to score (a file, folder or archive)."""
    folder = target / "submission"
    if submission.is_dir():
        shutil.copytree(submission, folder)
    else:
        folder.mkdir(parents=True)
        shutil.copy(submission, folder)
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    kinds = TEXT_REWRITES[challenge] if challenge in TEXT_REWRITES else IMAGE_REWRITES[challenge]
    chosen = rng.sample(sorted(kinds), k=min(len(kinds), rng.randint(2, 3)))
    chosen.sort(key=lambda kind: kind == "bom")  # a byte-order mark stays the file's first bytes
    for kind in chosen:
        for path in list(files):
            kinds[kind](path, rng)
        files = sorted(p for p in folder.rglob("*") if p.is_file())
    scored: Path = folder if submission.is_dir() else files[0]
    if rng.random() < 0.3:
        layout = rng.choice(["zip", "zip_in_folder", "tar_gz"])
        chosen.append(layout)
        scored = _archive(folder, target, layout)
    return chosen, scored


# --- text ------------------------------------------------------------------------------------------


def _edit_text(path: Path, change: Callable[[bytes], bytes]) -> None:
    path.write_bytes(change(path.read_bytes()))


def _numbers(path: Path, rng: random.Random, integers_too: bool) -> None:
    """Each number written another way with the same value (its double, and its exact decimal):
    in half the files one way for all (which the readers' fast paths take), else each its own."""
    one_way = rng.randrange(5) if rng.random() < 0.5 else None

    def spelled(match: re.Match[bytes]) -> bytes:
        whole, fraction = match[1].decode(), (match[2] or b"").decode()
        if not fraction and not integers_too:
            return match[0]
        digits = (whole + fraction).lstrip("0") or "0"
        exponent = len(whole.lstrip("0")) - 1 if whole.lstrip("0") else -(len(fraction) - len(fraction.lstrip("0")) + 1)
        forms = [
            f"{whole}.{fraction}{'0' * rng.randint(1, 3)}",
            f"+{whole}.{fraction}" if fraction else f"+{whole}",
            f"00{whole}.{fraction or '0'}",
        ]
        if whole.strip("0") == "" and fraction:
            forms.append(f".{fraction}")
        if digits != "0":
            forms.append(f"{digits[0]}.{digits[1:] or '0'}e{exponent:+d}")
        return (forms[min(one_way, len(forms) - 1)] if one_way is not None else rng.choice(forms)).encode()

    _edit_text(path, lambda data: NUMBER.sub(spelled, data))


def _aligned(path: Path, rng: random.Random, group: int) -> None:
    """Columns aligned as a writer that pads fields does it: the first number of each ``group``
    (a label) given two zero decimals, the others one or two at random (``179`` as ``179.0`` or
    ``179.00``), then every field left-justified to one width, so that ``179.0  `` stands beside
    ``179.00 ``."""
    lines = path.read_bytes().split(b"\n")

    def longer(field: bytes, place: int) -> bytes:
        zeros = 2 if place % group == 0 else rng.randint(1, 2)
        return NUMBER.sub(lambda m: m[0] + (b"" if m[2] else b".") + b"0" * zeros, field)

    rows = [[longer(field, place) for place, field in enumerate(line.split())] for line in lines]
    width = max((len(field) for row in rows for field in row), default=0) + 1
    path.write_bytes(b"\n".join(b"".join(field.ljust(width) for field in row) for row in rows))


def _padding(path: Path, rng: random.Random, blanks: tuple[bytes, ...], ends: tuple[bytes, ...], header: bool) -> None:
    """Runs of ``blanks`` for each space between fields, and ``ends`` at the ends of lines (the
    first line left alone when it is a ``header``)."""

    def padded(line: bytes) -> bytes:
        if not line.strip():
            return line
        end = b"\r" if line.endswith(b"\r") else b""  # a Windows line end stays the end
        line = re.sub(rb" ", lambda _: rng.choice(blanks), line.removesuffix(end))
        return rng.choice(ends) + line + rng.choice(ends) + end

    lines = path.read_bytes().split(b"\n")
    path.write_bytes(b"\n".join(lines[:header] + [padded(line) for line in lines[header:]]))


def _photos_shuffled(path: Path, rng: random.Random) -> None:
    """The photos' rows after the header in another order, the rows of each photo in theirs (the
    matching takes a photo's predictions in file order)."""
    lines = path.read_bytes().rstrip(b"\n").split(b"\n")
    head, groups = lines[:1], dict[bytes, list[bytes]]()
    for line in lines[1:]:
        groups.setdefault(line.split(b"\t")[0].strip(), []).append(line)
    order = list(groups)
    rng.shuffle(order)
    body = [line for name in order for line in groups[name]]
    path.write_bytes(b"\n".join(head + body) + b"\n")


def _identities_renamed(path: Path, rng: random.Random) -> None:
    """Each cluster number of a clustering replaced by another (they are positive integers), the
    same for all its images: the same partition."""
    lines = path.read_bytes().rstrip(b"\n").split(b"\n")
    names = {line.split(b",")[1].strip() for line in lines if b"," in line}
    renamed = dict(zip(sorted(names), rng.sample(sorted(names), len(names))))  # the numbers 1..K, permuted
    path.write_bytes(
        b"\n".join(
            line.split(b",")[0] + b"," + renamed[line.split(b",")[1].strip()] if b"," in line else line
            for line in lines
        )
        + b"\n"
    )


def _classes_as_words(path: Path, rng: random.Random) -> None:
    words = {b"0": [b"False", b"false", b"FALSE"], b"1": [b"True", b"true", b"TRUE"]}
    _edit_text(
        path,
        lambda data: re.sub(
            rb"\t([01])(\r?)$", lambda m: b"\t" + rng.choice(words[m[1]]) + m[2], data, flags=re.MULTILINE
        ),
    )


TEXT_COMMON: dict[str, Callable[[Path, random.Random], None]] = {
    "crlf": lambda path, rng: _edit_text(path, lambda data: data.replace(b"\n", b"\r\n")),
    "bom": lambda path, rng: _edit_text(path, lambda data: b"\xef\xbb\xbf" + data),
    "trailing_blank_lines": lambda path, rng: _edit_text(path, lambda data: data + b"\n" * rng.randint(1, 3)),
}
ILSVRC = {
    **TEXT_COMMON,
    "numbers": lambda path, rng: _numbers(path, rng, integers_too=True),
    "padding": lambda path, rng: _padding(
        path, rng, (b"  ", b"\t", b" \t ", b"   "), (b"", b" ", b"\t "), header=False
    ),
    "commas": lambda path, rng: _edit_text(path, lambda data: data.replace(b" ", b",")),
    "aligned": lambda path, rng: _aligned(path, rng, group=1),
}
TEXT_REWRITES: dict[str, dict[str, Callable[[Path, random.Random], None]]] = {
    "ilsvrc2012-cls": ILSVRC,
    "ilsvrc2012-loc": {
        **ILSVRC,
        "aligned": lambda path, rng: _aligned(path, rng, group=5),
    },  # label xmin ymin xmax ymax
    "ilsvrc2012-fine": ILSVRC,
    "camera-traps": {
        **TEXT_COMMON,
        "numbers": lambda path, rng: _numbers(path, rng, integers_too=False),
        "padding": lambda path, rng: _padding(path, rng, (b"  ", b"   "), (b"", b" "), header=True),
        "photos_shuffled": _photos_shuffled,
        "class_words": _classes_as_words,
    },
    "face-clustering": {
        **TEXT_COMMON,
        "identities_renamed": _identities_renamed,
    },
}


# --- images ----------------------------------------------------------------------------------------


def _png_again(path: Path, rng: random.Random) -> None:
    """The same pixels, compressed at another level with another filter choice."""
    with Image.open(path) as image:
        image.load()
        buffer = io.BytesIO()
        image.save(buffer, "PNG", compress_level=rng.randint(0, 9), optimize=rng.random() < 0.3)
    path.write_bytes(buffer.getvalue())


def _labels_as(path: Path, rng: random.Random, form: str) -> None:
    """A label image as 16-bit PNG or 16-bit TIFF, under the same or another accepted suffix."""
    labels = read_label_image(path).astype(np.uint16)
    stem = path.stem
    for suffix in ("_seg", "_pred", "_mask", "_label"):
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)] + rng.choice(["_seg", "_pred", "_mask", "_label"])
    target = path.with_name(stem + (".png" if form == "png16" else rng.choice([".tif", ".tiff"])))
    path.unlink()
    Image.fromarray(labels).save(target, "PNG" if form == "png16" else "TIFF")


IMAGE_REWRITES: dict[str, dict[str, Callable[[Path, random.Random], None]]] = {
    "glas": {
        "png_again": _png_again,
        "sixteen_bit": lambda path, rng: _labels_as(path, rng, "png16"),
        "tiff": lambda path, rng: _labels_as(path, rng, "tiff"),
    },
    "fuzzy-jaccard": {"png_again": _png_again, "png_again_twice": _png_again},
}


def _archive(folder: Path, target: Path, layout: str) -> Path:
    """The submission folder as a .zip (its files at the top, or in one folder) or a .tar.gz."""
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    if layout == "tar_gz":
        path = target / "submission.tar.gz"
        with tarfile.open(path, "w:gz") as archive:
            for file in files:
                archive.add(file, file.relative_to(folder).as_posix())
        return path
    path = target / "submission.zip"
    prefix = "team/" if layout == "zip_in_folder" else ""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in files:
            archive.write(file, prefix + file.relative_to(folder).as_posix())
    return path


# --- other valid submissions -----------------------------------------------------------------------


def perturb(challenge: str, submission: Path, target: Path, rng: random.Random) -> Path:
    """Another valid submission, with other scores: ``submission``'s values changed in ways its
    format accepts (guesses of a line reordered, predictions dropped, cluster numbers of two
    images swapped, objects erased, probabilities moved), for the tests that score one
    submission by every path. The path to score, in ``target``."""
    folder = target / "perturbed"
    shutil.copytree(submission, folder)
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        if challenge in ("ilsvrc2012-cls", "ilsvrc2012-loc", "ilsvrc2012-fine"):
            group = {"ilsvrc2012-cls": 1, "ilsvrc2012-loc": 5, "ilsvrc2012-fine": 1}[challenge]
            lines = path.read_bytes().split(b"\n")
            for k in rng.sample(range(len(lines)), len(lines) // 3):
                fields = lines[k].split()
                groups = [fields[i : i + group] for i in range(0, len(fields), group)]
                rng.shuffle(groups)
                lines[k] = b" ".join(f for g in groups for f in g)
            path.write_bytes(b"\n".join(lines))
        elif challenge == "camera-traps":
            lines = path.read_bytes().rstrip(b"\n").split(b"\n")
            path.write_bytes(b"\n".join(lines[:1] + [line for line in lines[1:] if rng.random() < 0.8]) + b"\n")
        elif challenge == "face-clustering":
            lines = path.read_bytes().rstrip(b"\n").split(b"\n")
            for _ in range(len(lines) // 5):
                i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
                (a, x), (b, y) = lines[i].split(b",", 1), lines[j].split(b",", 1)
                lines[i], lines[j] = a + b"," + y, b + b"," + x
            path.write_bytes(b"\n".join(lines) + b"\n")
        elif challenge == "glas":
            labels = read_label_image(path)
            values = [v for v in np.unique(labels).tolist() if v]
            for value in rng.sample(values, len(values) // 3):
                labels[labels == value] = 0
            Image.fromarray(labels).save(path)
        else:  # fuzzy-jaccard: probabilities moved by up to 20 points, within 0..100
            with Image.open(path) as image:
                pixels = np.asarray(image).astype(np.int16)
            noise = np.random.default_rng(rng.randrange(2**32)).integers(-20, 21, pixels.shape)
            Image.fromarray(np.clip(pixels + noise, 0, 100).astype(np.uint8)).save(path)
    return folder
