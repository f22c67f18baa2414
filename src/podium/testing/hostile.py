"""Hostile variants of a challenge's demo files, and a runner that watches podium score them.

Used by the fuzz test (``tests/test_fuzzed_inputs.py``, a few hundred cases per
challenge) and by ``benchmarks/fuzz.py`` (1,000 or more per challenge, with
inputs up to 300 MB). A case is fully determined by ``(challenge, number,
seed)``: it copies the demo's submission or truth, changes one thing in the
way a hostile participant (or a careless organizer) would, and runs
``podium evaluate`` on it in a forked child. The runner reports what an
organizer must never see:

- an internal error (exit 70), or an exit code the side does not allow
  (a submission may only be scored or rejected: 0 or 1; a truth may also give 2);
- a run over the time limit (the child is killed);
- the peak resident memory of the child (``ru_maxrss``, which includes the
  pages it shares with the parent at the fork);
- a read outside the submission: every ``open`` in the child is audited
  (:func:`sys.addaudithook`), and opening the canary (a secret file beside the
  case, which links in the hostile files point to) counts, as does the
  canary's text appearing in the output.

Mutation kinds, by the failure classes of issue 10 and the earlier fuzzing:
text (truncation, byte flips, junk, tokens, duplicated lines, a 200 kB field,
a line of many megabytes, millions of rows, megabytes of newlines, 300,000
pad characters, UTF-16, CR line ends, 60-digit and tiny decimals, giant
integers); PNG (tRNS, 16-bit, palette, RGB, alpha, gigapixel headers, bad CRC,
truncation, 65,535 labels, scattered dots); files and folders (symbolic and
hard links to the canary, FIFOs, a linked submission path, a submission one
folder down, an empty folder, an archive); ILSVRC boxes (tar headers with
non-octal or base-256 sizes, a gzip bomb, a FIFO, entity expansion, external
entities, deep nesting, backtracking bait, a linked XML).
"""

from __future__ import annotations

import gzip
import io
import math
import os
import random
import re
import resource
import shutil
import signal
import sys
import tarfile
import time
import warnings
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from podium.synthetic.demo import Demo

CANARY_TEXT = "podium-fuzz-canary-4f1c9e"  # must never appear in any output
EXIT_INTERNAL = 70


@dataclass(frozen=True)
class Case:
    """One hostile input: which side was changed, how, and the command that scores it."""

    challenge: str
    number: int
    side: str  # "submission", "truth" or "result" (a result document given to podium rank or podium report)
    kind: str
    target: str
    args: list[str]
    input_bytes: int  # the largest file the case wrote
    root: Path  # the case's folder: its files, the canary, and what the run printed

    @property
    def allowed_exits(self) -> set[int]:
        return {"submission": {0, 1}, "truth": {0, 1, 2}, "result": {0, 2}}[self.side]


@dataclass(frozen=True)
class Outcome:
    case: Case
    exit_code: int  # -1: killed at the time limit
    seconds: float
    peak_mb: float
    read_outside: bool
    output_tail: str

    @property
    def problems(self) -> list[str]:
        found = []
        if self.exit_code == EXIT_INTERNAL:
            found.append("internal error")
        elif self.exit_code == -1:
            found.append("hang")
        elif self.exit_code not in self.case.allowed_exits:
            found.append(f"exit {self.exit_code}")
        if self.read_outside:
            found.append("read outside the submission")
        return found


# --- making cases ---------------------------------------------------------------------------------


def make_case(challenge: str, demo: Demo, root: Path, number: int, seed: int = 0, big_mb: int = 8) -> Case:
    """Copy ``demo`` under ``root`` and change one thing; ``big_mb`` caps the size of large inputs."""
    rng = random.Random(f"{challenge}:{number}:{seed}")
    root.mkdir(parents=True)
    canary = root / "canary.txt"
    canary.write_text(CANARY_TEXT + "\n" + "0.5 0.5 0.1 0.1\n" * 3)
    submission = _copy(demo.submission, root / "submission")
    truth = _link_copy(demo.truth, root / "truth")
    settings = dict(demo.settings)
    roll = rng.random()
    side = "result" if roll < 0.05 else "truth" if roll < 0.25 else "submission"
    size = [0]
    if side == "result":
        kind, document = _hostile_result(rng, challenge)
        (root / "hostile.json").write_bytes(document)
        fine = SIGNATURE.replace("%s", challenge)
        (root / "fine.json").write_text(
            f'{{"challenge": "{challenge}", "status": "scored", "scores": {{}}, "signature": {fine}}}'
        )
        order = [str(root / "hostile.json"), str(root / "fine.json")]  # the hostile one first: its signature is shown
        args = rng.choice(
            [
                ["rank", challenge, *order, "--split", "public", "--json", "-"],
                ["rank", challenge, *order],
                ["report", order[0], "-o", str(root / "report.html")],
            ]
        )
        return Case(challenge, number, side, kind, "hostile.json", args, len(document), root)
    if side == "submission":
        kind, target, submission = _mutate_submission(rng, submission, canary, big_mb, size)
    else:
        kind, target, truth, settings = _mutate_truth(rng, truth, settings, root, canary, big_mb, size)
    args = [
        "evaluate",
        challenge,
        "--truth",
        str(truth),
        "--submission",
        str(submission),
        "--workers",
        "1",
        "--quiet",
        "--json",
        "-",
    ]
    args += [a for k, v in settings.items() for a in ("--set", f"{k}={v}")]
    return Case(challenge, number, side, kind, target, args, size[0], root)


def _copy(source: Path, dest: Path) -> Path:
    if source.is_dir():
        shutil.copytree(source, dest, symlinks=True)
    else:
        shutil.copy2(source, dest)
    return dest


def _link_copy(source: Path, dest: Path) -> Path:
    """The truth, hard-linked (fast for the 1,000 box files); a mutated file is replaced, never written through."""
    if source.is_dir():
        shutil.copytree(source, dest, copy_function=os.link)
    else:
        os.link(source, dest)
    return dest


def _files(path: Path) -> list[Path]:
    return [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())


def _replace(path: Path, data: bytes, size: list[int]) -> None:
    path.unlink()
    path.write_bytes(data)
    size[0] = max(size[0], len(data))


def _mutate_submission(
    rng: random.Random, submission: Path, canary: Path, big_mb: int, size: list[int]
) -> tuple[str, str, Path]:
    files = _files(submission)
    target = rng.choice(files[:200])
    structural = rng.random() < 0.25
    if structural:
        kind = rng.choice(STRUCTURAL)
        return kind, target.name, _structural(kind, submission, target, canary, big_mb, size)
    kind, data = _mutate_file(rng, target.read_bytes(), target.suffix.lower(), big_mb)
    _replace(target, data, size)
    return kind, str(target.relative_to(submission.parent)), submission


def _mutate_truth(
    rng: random.Random, truth: Path, settings: dict[str, str], root: Path, canary: Path, big_mb: int, size: list[int]
) -> tuple[str, str, Path, dict[str, str]]:
    if "boxes" in settings and rng.random() < 0.6:
        boxes = _link_copy(Path(settings["boxes"]), root / "boxes")
        kind, boxes = _hostile_boxes(rng, boxes, root, canary, big_mb, size)
        return kind, "boxes", truth, {**settings, "boxes": str(boxes)}
    target = rng.choice(_files(truth)[:200])
    kind, data = _mutate_file(rng, target.read_bytes(), target.suffix.lower(), big_mb)
    _replace(target, data, size)
    return kind, str(target.relative_to(root)), truth, settings


STRUCTURAL = (
    "symlink_to_canary",
    "hardlink_to_canary",
    "fifo",
    "linked_submission",
    "one_level_down",
    "empty_folder",
    "zip_archive",
    "folder_link",
)


def _structural(kind: str, submission: Path, target: Path, canary: Path, big_mb: int, size: list[int]) -> Path:
    """Links, special files and odd layouts; returns the submission path to give podium."""
    if kind == "symlink_to_canary":
        target.unlink()
        target.symlink_to(canary)
    elif kind == "hardlink_to_canary":
        target.unlink()
        os.link(canary, target)
    elif kind == "fifo":
        target.unlink()
        os.mkfifo(target)
    elif kind == "linked_submission":
        link = submission.parent / "linked"
        link.symlink_to(submission)
        return link
    elif kind == "one_level_down":
        outer = submission.parent / "outer"
        outer.mkdir()
        submission.rename(outer / submission.name)
        return outer
    elif kind == "empty_folder":
        shutil.rmtree(submission) if submission.is_dir() else submission.unlink()
        submission.mkdir()
    elif kind == "zip_archive":
        archive = submission.parent / "submission.zip"
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("bomb.txt", bytes(min(big_mb, 64) << 20))  # inflates far beyond its size
            z.writestr("../escape.txt", "x")
        archive.write_bytes(buffer.getvalue())
        return archive
    elif kind == "folder_link":
        (submission if submission.is_dir() else submission.parent).joinpath("outside").symlink_to(canary.parent)
    return submission


TOKENS = [
    b"nan",
    b"-1",
    b"1e309",
    b"\n\n",
    b",,",
    b"\t",
    b"123456789012345678901234567890",
    b"\xff\xfe",
    b'"',
    b"\x00",
    b"inf",
    b"-0",
    b"0x1p3",
    b"1e-400",
    b"9" * 5000,
    b"0." + b"3" * 60,
    b"1e-9",
    b"\r",
    b";",
    b"[",
    b"]",
    b"1_0",
]
BYTE_KINDS = ("truncate", "flip", "junk", "empty")
TEXT_KINDS = (
    *BYTE_KINDS,
    "token",
    "duplicate",
    "giant_field",
    "long_line",
    "many_rows",
    "newlines",
    "padding",
    "utf16",
    "cr_only",
    "long_decimals",
    "tiny_boxes",
    "quotes",
)
PNG_KINDS = (
    *BYTE_KINDS,
    "trns",
    "sixteen_bit",
    "palette",
    "rgb",
    "alpha",
    "gigapixel",
    "bad_crc",
    "many_labels",
    "dots",
    "inflate_bomb",
    "not_png",
)


def _mutate_file(rng: random.Random, data: bytes, suffix: str, big_mb: int) -> tuple[str, bytes]:
    image = data.startswith(b"\x89PNG") or suffix in (".png", ".bmp", ".tif", ".tiff")
    kind = rng.choice(PNG_KINDS if image else TEXT_KINDS)
    if kind in BYTE_KINDS:
        return kind, _mutate_bytes(kind, data, rng)
    return kind, _mutate_png(kind, data, rng) if image else _mutate_text(kind, data, rng, big_mb)


def _mutate_bytes(kind: str, data: bytes, rng: random.Random) -> bytes:
    """Mutations that ignore the format: truncation, flipped bytes, junk, nothing."""
    if kind == "truncate":
        return data[: rng.randrange(len(data))] if data else data
    if kind == "flip" and data:
        out = bytearray(data)
        for _ in range(rng.randint(1, 20)):
            out[rng.randrange(len(out))] = rng.randrange(256)
        return bytes(out)
    if kind == "junk":
        return rng.randbytes(rng.randint(0, 5000))
    return b""


def _mutate_text(kind: str, data: bytes, rng: random.Random, big_mb: int) -> bytes:
    big = rng.randint(1, big_mb) << 20
    lines = data.split(b"\n")
    if kind == "token" and data:
        k = rng.randrange(len(data))
        return data[:k] + rng.choice(TOKENS) + data[k:]
    if kind == "giant_field":
        k = rng.randrange(len(lines))
        lines[k] = b"I" * 200_000 + lines[k]
        return b"\n".join(lines)
    if kind == "long_line":
        return data + b"x" * big  # a last line of megabytes, no newline
    if kind == "many_rows":
        body = b"\n".join(lines[1:] if len(lines) > 1 else lines) + b"\n"
        return data + body * max(1, big // max(len(body), 1))
    if kind == "newlines":
        return data + b"\n" * big
    if kind == "padding":
        k = rng.randrange(len(lines))
        lines[k] = lines[k].replace(b",", b"," + b"\t" * 300_000, 1) if b"," in lines[k] else b"\t" * 300_000 + lines[k]
        return b"\n".join(lines)
    if kind == "utf16":
        return data.decode("utf-8", "replace").encode("utf-16")
    if kind == "cr_only":
        return data.replace(b"\n", b"\r")
    if kind == "long_decimals":
        return _rewrite_numbers(data, rng, lambda v: f"{v:.60f}")
    if kind == "tiny_boxes":
        return _rewrite_numbers(data, rng, lambda v: f"{0.3 + v * 1e-9:.20f}")
    if kind == "quotes":
        return data.replace(b",", b'",', rng.randint(1, 50))
    lines.insert(rng.randrange(len(lines) + 1), rng.choice(lines))  # duplicate
    return b"\n".join(lines)


def _rewrite_numbers(data: bytes, rng: random.Random, write: Callable[[float], str]) -> bytes:
    """Decimals between 0 and 1 rewritten (60 digits, or scaled to a 1e-9 box)."""

    def replace(match: re.Match[bytes]) -> bytes:
        return write(float(match.group(0))).encode() if rng.random() < 0.7 else match.group(0)

    return re.sub(rb"\b0\.[0-9]+\b", replace, data)


def _mutate_png(kind: str, data: bytes, rng: random.Random) -> bytes:
    try:
        with Image.open(io.BytesIO(data)) as image:
            pixels = np.asarray(image)
    except Exception:
        pixels = np.zeros((16, 16), np.uint8)
    pixels = pixels if pixels.ndim == 2 else pixels[..., 0]
    h, w = pixels.shape

    def encode(array: np.ndarray, mode: str | None = None, **options: object) -> bytes:
        out = io.BytesIO()
        image = Image.fromarray(array)
        (image.convert(mode) if mode else image).save(out, format="PNG", **options)
        return out.getvalue()

    if kind == "trns":
        array = pixels.astype(np.uint16 if rng.random() < 0.5 else np.uint8)
        return encode(array, transparency=int(array.flat[0]))
    if kind == "sixteen_bit":
        return encode(pixels.astype(np.uint16) * rng.choice([1, 257]))
    if kind in ("palette", "rgb", "alpha"):
        return encode(pixels.astype(np.uint8), {"palette": "P", "rgb": "RGB", "alpha": "LA"}[kind])
    if kind == "gigapixel":
        return _with_header_size(data, 100_000, 100_000) if data.startswith(b"\x89PNG") else data
    if kind == "bad_crc" and len(data) > 40:
        return data[:29] + bytes([data[29] ^ 0xFF]) + data[30:]
    if kind == "many_labels":
        labels = np.arange(h * w, dtype=np.int64).reshape(h, w) % 65535 + 1
        return encode(labels.astype(np.uint16))
    if kind == "dots":
        return encode(((np.random.default_rng(rng.randrange(2**32)).random((h, w)) < 0.2) * 255).astype(np.uint8))
    if kind == "inflate_bomb":  # the image's own header, and image data that inflates to 64 MB, far past its rows
        return (
            data[:33] + _png_chunk(b"IDAT", zlib.compress(bytes(64 << 20), 9)) + _png_chunk(b"IEND", b"")
            if data.startswith(b"\x89PNG")
            else data
        )
    return b"GIF89a" + data[6:]  # not_png


def _png_chunk(kind: bytes, body: bytes) -> bytes:
    return len(body).to_bytes(4, "big") + kind + body + zlib.crc32(kind + body).to_bytes(4, "big")


def _with_header_size(data: bytes, width: int, height: int) -> bytes:
    """The PNG with its IHDR size changed and the chunk's CRC made valid again."""
    ihdr = b"IHDR" + width.to_bytes(4, "big") + height.to_bytes(4, "big") + data[24:29]
    return data[:12] + ihdr + zlib.crc32(ihdr).to_bytes(4, "big") + data[33:]


BOX_KINDS = (
    "non_octal_size",
    "base256_size",
    "gzip_bomb",
    "fifo",
    "entity_expansion",
    "external_entity",
    "deep_nesting",
    "backtracking",
    "linked_xml",
    "truncated_xml",
)


def _hostile_boxes(
    rng: random.Random, boxes: Path, root: Path, canary: Path, big_mb: int, size: list[int]
) -> tuple[str, Path]:
    """The ILSVRC boxes made hostile: as an archive, or one XML file of the folder."""
    kind = rng.choice(BOX_KINDS)
    xmls = sorted(boxes.glob("*.xml"))
    one = rng.choice(xmls)
    if kind in ("non_octal_size", "base256_size"):
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as archive:
            for path in xmls:
                archive.add(path, arcname=f"val/{path.name}")
        data = bytearray(buffer.getvalue())
        member = 512 * rng.randrange(4)
        data[member + 124 : member + 136] = (
            b"0000000009x\0" if kind == "non_octal_size" else b"\x80" + bytes(7) + (2**31).to_bytes(4, "big")
        )
        (root / "boxes.tar").write_bytes(bytes(data))
        size[0] = max(size[0], len(data))
        return kind, root / "boxes.tar"
    if kind == "gzip_bomb":
        with gzip.open(root / "boxes.tgz", "wb", compresslevel=9) as f:
            for _ in range(max(64, big_mb * 16)):
                f.write(bytes(1 << 20))
        return kind, root / "boxes.tgz"
    if kind == "fifo":
        os.mkfifo(root / "boxes_fifo.tgz")
        return kind, root / "boxes_fifo.tgz"
    hostile = {
        "entity_expansion": b'<?xml version="1.0"?><!DOCTYPE a [<!ENTITY a "aaaaaaaaaa">'
        + b"".join(
            b'<!ENTITY %c "&%c;&%c;&%c;&%c;&%c;&%c;&%c;&%c;&%c;&%c;">' % ((98 + i,) + (97 + i,) * 10) for i in range(9)
        )
        + b"]><annotation>&j;</annotation>",
        "external_entity": b'<!DOCTYPE a [<!ENTITY x SYSTEM "file://'
        + str(canary).encode()
        + b'">]><annotation>&x;</annotation>',
        "deep_nesting": b"<a>" * 200_000 + b"</a>" * 200_000,
        "backtracking": b"<annotation>" + b"<object><name>x<bndbox><xmin>1" * 30_000,
        "truncated_xml": one.read_bytes()[: rng.randrange(1, len(one.read_bytes()))],
    }.get(kind)
    one.unlink()
    if hostile is None:  # linked_xml
        one.symlink_to(canary)
    else:
        one.write_bytes(hostile)
    return kind, boxes


RESULT_KINDS = (
    "scores_null",
    "scores_string",
    "scores_list",
    "score_string",
    "score_list",
    "score_object",
    "huge_integer",
    "nan",
    "infinity",
    "status_case",
    "status_list",
    "deep_nesting",
    "not_json",
    "wrong_challenge",
    "signature_string",
    "signature_parameters",
    "signature_contest",
    "signature_split",
    "units_list",
    "units_columns",
    "units_row_length",
    "units_row_string",
    "units_split",
    "details_list",
    "details_wrong",
)
HOSTILE_EXTRAS = {  # more keys of a broken document: its unit statistics (rank), its details (report)
    "units_list": '"units": [1]',
    "units_columns": '"units": {"columns": [1], "rows": {}}',
    "units_row_length": '"units": {"columns": ["a", "b"], "rows": {"u": [1]}}',
    "units_row_string": '"units": {"columns": ["a"], "rows": {"u": ["1"]}}',
    "units_split": '"units": {"columns": ["a"], "rows": {"u": [1]}, "split": [1]}',
    "details_list": '"details": [1]',
    "details_wrong": '"details": {"per_image": 5, "per_class": [1], "per_photo": {"a": 1}, "cluster_sizes": 3, "merges": 1}',
}
SIGNATURE = (
    '{"challenge": "%s", "parameters": {}, "truth": null, "contest": {"id": "c", "split": {"fingerprint": null}}}'
)
HOSTILE_SIGNATURES = {
    "signature_string": '"sha256:0"',
    "signature_parameters": '{"challenge": "%s", "parameters": [1], "truth": null, "contest": null}',
    "signature_contest": '{"challenge": "%s", "parameters": {}, "truth": null, "contest": [1]}',
    "signature_split": '{"challenge": "%s", "parameters": {}, "truth": null, "contest": {"id": "c", "split": 3}}',
}


def _hostile_result(rng: random.Random, challenge: str) -> tuple[str, bytes]:
    """A result document for ``podium rank`` that is broken in one way."""
    kind = rng.choice(RESULT_KINDS)
    scores = {
        "scores_null": "null",
        "scores_string": '"0.5"',
        "scores_list": "[0.5]",
        "score_string": '{"s": "0.5"}',
        "score_list": '{"s": [1]}',
        "score_object": '{"s": {"a": 1}}',
        "huge_integer": '{"s": ' + "9" * rng.choice([400, 5000]) + "}",
        "nan": '{"s": NaN}',
        "infinity": '{"s": -Infinity}',
    }.get(kind, "{}")
    status = {"status_case": '"SCORED"', "status_list": "[]"}.get(kind, '"scored"')
    name = "another-challenge" if kind == "wrong_challenge" else challenge
    signature = HOSTILE_SIGNATURES.get(kind, SIGNATURE).replace("%s", challenge)
    extra = ", " + HOSTILE_EXTRAS[kind] if kind in HOSTILE_EXTRAS else ""
    document = (
        f'{{"challenge": "{name}", "status": {status}, "scores": {scores}, "signature": {signature}{extra}}}'.encode()
    )
    if kind == "deep_nesting":
        document = b"[" * 100_000 + b"]" * 100_000
    elif kind == "not_json":
        document = rng.randbytes(200)
    return kind, document


# --- running cases --------------------------------------------------------------------------------


def run_case(case: Case, time_limit_s: float = 10.0) -> Outcome:
    """Run ``podium`` on ``case`` in a forked child; a hang is ``time_limit_s`` of CPU time.

    The child is stopped by the kernel past ``time_limit_s`` CPU seconds (``RLIMIT_CPU``), so
    a loaded machine, where the child waits for a core, does not pass for a hang; a child
    that waits without computing is stopped at six times that, in wall seconds.
    """
    from podium.cli import cli

    canary = case.root / "canary.txt"
    out_path = canary.parent / "output.txt"
    flag_path = canary.parent / "read-outside.txt"
    cpu = math.ceil(time_limit_s)
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child: audit every open, run the command, exit with its code
        code = EXIT_INTERNAL
        try:
            resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))  # SIGXCPU at the limit, SIGKILL a second later
            fd = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            os.dup2(fd, 1)
            os.dup2(fd, 2)
            sys.stdout = sys.stderr = open(1, "w", closefd=False)  # noqa: SIM115 (the process's own stdout, for its life)
            canary_id = (os.stat(canary).st_dev, os.stat(canary).st_ino)
            sys.addaudithook(_open_watcher(canary_id, flag_path))
            try:
                cli.main(case.args, prog_name="podium", standalone_mode=True)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
        finally:
            sys.stdout.flush()
            os._exit(code)
    hung = False
    while True:
        waited, status, usage = os.wait4(pid, os.WNOHANG)
        if waited:
            break
        if time.monotonic() - start > 6 * time_limit_s:
            os.kill(pid, signal.SIGKILL)
            _, status, usage = os.wait4(pid, 0)
            hung = True
            break
        time.sleep(0.005)
    seconds = time.monotonic() - start
    output = out_path.read_text(errors="replace") if out_path.exists() else ""
    stopped = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
    hung = hung or stopped == signal.SIGXCPU or (stopped == signal.SIGKILL and usage.ru_utime + usage.ru_stime >= cpu)
    exit_code = -1 if hung else os.waitstatus_to_exitcode(status)
    peak_mb = usage.ru_maxrss / 1024
    read_outside = flag_path.exists() or CANARY_TEXT in output
    return Outcome(case, exit_code, seconds, peak_mb, read_outside, output[-600:])


def _open_watcher(canary: tuple[int, int], flag: Path) -> Callable[[str, tuple[object, ...]], None]:
    def hook(event: str, args: tuple[object, ...]) -> None:
        if event != "open" or not isinstance(args[0], (str, bytes, os.PathLike)):
            return
        try:
            info = os.stat(args[0])
        except (OSError, ValueError):
            return
        if (info.st_dev, info.st_ino) == canary:
            flag.write_text(str(args[0]))

    return hook


# --- hostile uploads: archives for podium serve ---------------------------------------------------

ARCHIVE_KINDS = (
    "flip",
    "truncate",
    "dotdot",
    "absolute",
    "backslash",
    "control",
    "long_name",
    "wide_name",
    "not_utf8",
    "deep",
    "symlink",
    "hardlink",
    "device",
    "fifo",
    "duplicate",
    "file_and_folder",
    "bomb",
    "spread_bomb",
    "many_entries",
    "empty",
    "junk",
)


def hostile_archive(rng: random.Random, submission: Path) -> tuple[str, bytes]:
    """A zip or tar.gz upload made from the files of ``submission`` with one hostile change; (kind, bytes)."""
    kind = rng.choice(ARCHIVE_KINDS)
    files = [(str(p.relative_to(submission)), p.read_bytes()) for p in _files(submission)]
    as_zip = rng.random() < 0.5 and kind != "not_utf8"  # zipfile cannot write such a name; tarfile can
    special = {
        "symlink": tarfile.SYMTYPE,
        "hardlink": tarfile.LNKTYPE,
        "device": tarfile.CHRTYPE,
        "fifo": tarfile.FIFOTYPE,
    }
    names = {
        "dotdot": "../" * rng.randint(1, 5) + "escape.txt",
        "absolute": "/tmp/podium-escape.txt",
        "backslash": "..\\..\\escape.txt",
        "control": "a\x01b\nc.txt",
        "long_name": "a" * rng.choice((255, 256, 1000)),
        "wide_name": "é" * rng.choice((127, 128, 200)),
        "not_utf8": "\udcff\udcfe" * rng.choice((1, 128)) + ".txt",  # bytes 0xff 0xfe as tarfile and zipfile read them
        "deep": "/".join(["d" * 60] * rng.choice((60, 80))) + "/x.txt",
    }
    if kind in names:
        members = [*files, (names[kind], b"x")]
    elif kind == "duplicate":
        members = [*files, files[0]]
    elif kind == "file_and_folder":
        members = [("a", b"x"), ("a/b", b"y")]
    elif kind == "bomb":
        members = [("bomb.bin", bytes(rng.choice((8, 32)) << 20))]
    elif kind == "spread_bomb":  # each member within its own ratio, the whole far past the upload's budget
        members = [*files, *((f"part{i}.bin", bytes(rng.choice((2, 4)) << 20)) for i in range(rng.choice((9, 20))))]
    elif kind == "many_entries":
        members = [(f"f{i}.txt", b"") for i in range(rng.choice((301, 2000)))]
    elif kind == "empty":
        members = []
    else:
        members = files
    if kind in special:
        data = _tar_gz(files, (kind, special[kind]))
    else:
        data = _zip(members) if as_zip else _tar_gz(members)
    if kind == "flip":
        mutable = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            mutable[rng.randrange(len(mutable))] = rng.randrange(256)
        data = bytes(mutable)
    elif kind == "truncate":
        data = data[: rng.randrange(1, len(data))]
    elif kind == "junk":
        data = data[:4] + rng.randbytes(rng.randint(0, 4096))
    return kind, data


def _zip(members: list[tuple[str, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        warnings.simplefilter("ignore")  # duplicate names are a case
        for name, data in members:
            archive.writestr(zipfile.ZipInfo(name), data, zipfile.ZIP_DEFLATED)
    return buffer.getvalue()


def _tar_gz(members: list[tuple[str, bytes]], special: tuple[str, bytes] | None = None) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        if special is not None:
            info = tarfile.TarInfo(special[0])
            info.type, info.linkname = special[1], "/etc/passwd"
            archive.addfile(info)
    return buffer.getvalue()
