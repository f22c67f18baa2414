"""Parameter types: every bad value gets a plain message that says what is allowed."""

from __future__ import annotations

from pathlib import Path

import pytest

from podium.core.errors import UsageError
from podium.core.parameters import integer, optional_integer, optional_path, parse_settings, real, resolve


@pytest.mark.parametrize(
    ("parameter", "text", "message"),
    [
        (integer("n", 5, "", 1), "abc", "must be an integer >= 1"),
        (integer("n", 5, "", 1), "0", "must be an integer >= 1"),
        (optional_integer("n", "", 0, 9), "10", "must be an integer from 0 to 9, or none"),
        (real("x", 1.0, "", exclusive=True), "nan", "must be a finite number > 0"),
        (optional_path("p", "", "a folder of photos", folder=True), "/no/such/place", "must be a folder of photos"),
    ],
)
def test_bad_values(parameter, text: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        resolve([parameter], {parameter.name: text})


def test_good_values_and_none(tmp_path: Path) -> None:
    params = [integer("n", 5, "", 1), optional_integer("i", "", 0, 9), optional_path("p", "", "x", folder=True)]
    assert resolve(params, {}) == {"n": 5, "i": None, "p": None}
    assert resolve(params, {"n": "7", "i": "none", "p": str(tmp_path)}) == {"n": 7, "i": None, "p": tmp_path}
    assert parse_settings(["a=1", "a=2", "b= x "]) == {"a": "2", "b": "x"}
