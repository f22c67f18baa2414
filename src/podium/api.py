"""podium as a library: score a submission in a Python program, as ``podium evaluate`` does.

>>> import tempfile, podium
>>> folder = tempfile.mkdtemp()
>>> demo = podium.demo("camera-traps", folder)
>>> result = podium.evaluate("camera-traps", demo.truth, demo.submission)
>>> result.status, sorted(result.scores)[:3]
('scored', ['class_accuracy', 'classification_points', 'detection_points'])
>>> 0 <= result.scores["score"] <= 1
True
>>> podium.validate("camera-traps", demo.truth, demo.submission).errors
[]

Parameters are keyword arguments, typed or written as on the command line
(``matching="optimal"``, ``parts=["testA", "testB"]``, ``min_size=128``); an
unknown one raises :class:`~podium.core.errors.UsageError`. A bad submission is not an
exception: its result is ``rejected`` and ``result.errors`` names each problem
with its file and line.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from podium.challenges import get
from podium.core.result import Result
from podium.scoring.engine import evaluate as _evaluate
from podium.synthetic.demo import Demo

PathLike = str | os.PathLike[str]


def evaluate(
    challenge: str, truth: PathLike, submission: PathLike, *, workers: int = 1, **parameters: object
) -> Result:
    """Score ``submission`` (a file, a folder, or a .zip / .tar.gz of either) against ``truth`` by ``challenge``'s rules.

    Raises :class:`~podium.core.errors.UsageError` for an unknown challenge or
    parameter and :class:`~podium.core.errors.TruthError` for an unusable truth.
    """
    return _evaluate(challenge, Path(truth), Path(submission), _settings(parameters), workers=workers)


def validate(challenge: str, truth: PathLike, submission: PathLike, **parameters: object) -> Result:
    """Check ``submission`` without scoring it: ``result.errors`` is empty when it would be scored."""
    return _evaluate(challenge, Path(truth), Path(submission), _settings(parameters), checks_only=True)


def demo(challenge: str, folder: PathLike) -> Demo:
    """Write ``challenge``'s small synthetic test set and a sample submission into ``folder``.

    Give ``demo.settings`` to :func:`evaluate` as keyword arguments where a challenge needs them.
    """
    return get(challenge).write_demo(Path(folder))


def _settings(parameters: dict[str, object]) -> dict[str, str]:
    """Keyword values as the text the command line would give: lists comma-separated, paths and numbers as text."""
    return {
        name: ",".join(map(str, value))
        if isinstance(value, Iterable) and not isinstance(value, (str, os.PathLike))
        else str(value)
        for name, value in parameters.items()
    }
