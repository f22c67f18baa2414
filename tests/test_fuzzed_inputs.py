"""Bad input is normal input: mutated submissions and truths never make podium crash.

For every challenge, its demo files are truncated, overwritten with junk, given odd tokens
(NaN, huge numbers, stray quotes, bad bytes) or duplicated lines. Whatever happens, the exit
code must be 0 or 1 for a submission and 0, 1 or 2 for a truth: never 70 (internal error).
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from conftest import run
from podium.challenges import IDS, get

TOKENS = [b"nan", b"-1", b"1e309", b"\n\n", b",,", b"\t", b"123456789012345678901234567890", b"\xff\xfe", b'"', b"\x00"]


def mutate(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    op = rng.choice(["truncate", "flip", "junk", "empty", "insert", "duplicate"])
    if op == "truncate" and out:
        return bytes(out[: rng.randrange(len(out))])
    if op == "flip" and out:
        for _ in range(rng.randint(1, 20)):
            out[rng.randrange(len(out))] = rng.randrange(256)
        return bytes(out)
    if op == "junk":
        return rng.randbytes(rng.randint(0, 2000))
    if op == "empty":
        return b""
    if op == "insert" and out:
        k = rng.randrange(len(out))
        return bytes(out[:k] + rng.choice(TOKENS) + out[k:])
    lines = bytes(out).split(b"\n")
    lines.insert(rng.randrange(len(lines) + 1), rng.choice(lines))
    return b"\n".join(lines)


def files_of(path: Path) -> list[Path]:
    return [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())


@pytest.mark.parametrize("challenge", IDS)
def test_mutated_inputs_never_crash(tmp_path: Path, challenge: str) -> None:
    rng = random.Random(challenge)
    demo = get(challenge).write_demo(tmp_path)
    args = ["evaluate", challenge, "--truth", str(demo.truth), "--submission", str(demo.submission), "--workers", "1", "--quiet"]
    args += [a for k, v in demo.settings.items() for a in ("--set", f"{k}={v}")]
    for side, allowed in (("submission", {0, 1}), ("truth", {0, 1, 2})):
        candidates = files_of(demo.submission if side == "submission" else demo.truth)
        for _ in range(6):
            target = rng.choice(candidates[:200])
            original = target.read_bytes()
            target.write_bytes(mutate(original, rng))
            code, output = run(*args)
            target.write_bytes(original)
            assert code in allowed, f"{side} {target.name}: exit {code}\n{output[-500:]}"
