"""A program's entry point: named, or the archive's one obvious file; never a guess between two."""

from __future__ import annotations

from pathlib import Path

import pytest

from podium.service.entry_points import entry_point


def _folder(tmp_path: Path, *names: str) -> Path:
    for name in names:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    return tmp_path


@pytest.mark.parametrize(
    ("names", "asked", "found"),
    [
        (("run.py", "model.bin", "lib/helper.py"), None, "run.py"),  # the only runnable file at the top
        (("run.sh", "main.py", "train.py"), None, "run.sh"),  # run.sh first, as always
        (("main.py", "train.py"), "train.py", "train.py"),  # named
        (("solve.sh",), None, "solve.sh"),
    ],
)
def test_the_entry_point_found(tmp_path: Path, names: tuple[str, ...], asked: str | None, found: str) -> None:
    assert entry_point(_folder(tmp_path, *names), asked) == (found, None)


@pytest.mark.parametrize(
    ("names", "asked", "said"),
    [
        (
            ("main.py", "train.py"),
            None,
            "2 possible entry points (main.py, train.py): name it with podium submit --entry NAME",
        ),
        (("model.bin", "lib/run.py"), None, "no run.sh nor any other .py or .sh file at its top"),
        (("main.py",), "run.sh", "no entry point 'run.sh'"),
        (("main.py",), "../main.py", "no entry point '../main.py'"),
        (("main.py",), "/etc/passwd", "no entry point '/etc/passwd'"),
    ],
)
def test_no_entry_point_says_what_was_found(
    tmp_path: Path, names: tuple[str, ...], asked: str | None, said: str
) -> None:
    entry, why = entry_point(_folder(tmp_path / "code", *names), asked)
    assert entry is None and why is not None and said in why


def test_a_link_is_no_entry_point(tmp_path: Path) -> None:
    code = _folder(tmp_path / "code", "model.bin")
    (code / "run.py").symlink_to(tmp_path / "elsewhere.py")
    assert entry_point(code, None)[0] is None and entry_point(code, "run.py")[0] is None
