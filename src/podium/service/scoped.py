"""The contest filter of the queries over every team or submission: track ids repeat across contests (two contests may
each have a track ``main``), so a board, a count or an archive names its contest (through ``teams.contest``)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import and_, select

from podium.service.tables import submissions, teams


def team_ids(contest: str) -> Any:
    """The ids of the teams of ``contest`` (a subquery)."""
    return select(teams.c.id).where(teams.c.contest == contest)


def of_contest(contest: str) -> Any:
    """A submission by a team of ``contest``."""
    return submissions.c.team_id.in_(team_ids(contest))


def on_tracks(contest: str, tracks: list[str]) -> Any:
    """A submission to one of ``tracks`` by a team of ``contest``."""
    return and_(submissions.c.track.in_(tracks), of_contest(contest))
