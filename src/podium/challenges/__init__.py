"""The registry of challenges, by id."""

from __future__ import annotations

from podium.challenges.base import Challenge
from podium.challenges.camera_traps import CameraTraps
from podium.challenges.face_clustering import FaceClustering
from podium.challenges.fuzzy_jaccard import FuzzyJaccard
from podium.challenges.glas import GlaS
from podium.challenges.ilsvrc2012 import Ilsvrc2012Cls, Ilsvrc2012Fine, Ilsvrc2012Loc
from podium.errors import UsageError

REGISTRY: dict[str, Challenge] = {c.id: c for c in (FuzzyJaccard(), FaceClustering(), GlaS(), CameraTraps(), Ilsvrc2012Cls(), Ilsvrc2012Loc(), Ilsvrc2012Fine())}


def get(challenge_id: str) -> Challenge:
    try:
        return REGISTRY[challenge_id]
    except KeyError:
        raise UsageError(f"unknown challenge {challenge_id!r} (challenges: {', '.join(REGISTRY)})") from None
