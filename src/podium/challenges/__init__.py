"""The registry of challenges, by id."""

from __future__ import annotations

from podium.challenges.base import Challenge
from podium.challenges.camera_traps import CameraTraps
from podium.challenges.face_clustering import FaceClustering
from podium.challenges.fuzzy_jaccard import FuzzyJaccard
from podium.challenges.glas import GlaS
from podium.errors import UsageError

REGISTRY: dict[str, Challenge] = {c.id: c for c in (FuzzyJaccard(), FaceClustering(), GlaS(), CameraTraps())}


def get(challenge_id: str) -> Challenge:
    try:
        return REGISTRY[challenge_id]
    except KeyError:
        raise UsageError(f"unknown challenge {challenge_id!r} (challenges: {', '.join(REGISTRY)})") from None
