"""The registry of challenges, by id. Modules are imported on first use, so that a command
that scores one challenge does not pay for the libraries of the others, and one that only names
them (``podium challenges``, ``--help``) for none: their descriptions are in :mod:`~podium.challenges.catalog`."""

from __future__ import annotations

from functools import cache
from importlib import import_module
from typing import TYPE_CHECKING, Any

from podium.core.errors import UsageError

if TYPE_CHECKING:
    from podium.challenges.base import Challenge

_WHERE = {
    "fuzzy-jaccard": "podium.challenges.fuzzy_jaccard:FuzzyJaccard",
    "face-clustering": "podium.challenges.face_clustering:FaceClustering",
    "glas": "podium.challenges.glas:GlaS",
    "camera-traps": "podium.challenges.camera_traps:CameraTraps",
    "ilsvrc2012-cls": "podium.challenges.ilsvrc2012:Ilsvrc2012Cls",
    "ilsvrc2012-loc": "podium.challenges.ilsvrc2012:Ilsvrc2012Loc",
    "ilsvrc2012-fine": "podium.challenges.ilsvrc2012_fine:Ilsvrc2012Fine",
}
IDS: tuple[str, ...] = tuple(_WHERE)


def known(challenge_id: str) -> str:
    """``challenge_id`` if it names a challenge; else a usage error that lists every id."""
    if challenge_id not in _WHERE:
        raise UsageError(f"unknown challenge {challenge_id!r} (challenges: {', '.join(IDS)})")
    return challenge_id


@cache
def get(challenge_id: str) -> Challenge[Any, Any, Any]:
    module, name = _WHERE[known(challenge_id)].split(":")
    challenge: Challenge[Any, Any, Any] = getattr(import_module(module), name)()
    assert challenge.id == challenge_id
    return challenge


def every() -> list[Challenge[Any, Any, Any]]:
    return [get(i) for i in IDS]


def runnable() -> list[str]:
    """The challenges whose participants may send programs (``podium run``)."""
    return [challenge.id for challenge in every() if challenge.program is not None]
