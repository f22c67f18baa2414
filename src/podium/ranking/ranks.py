"""Ranking teams from their result documents.

Standard competition ranking ("1224"): equal values share a rank and the next
rank skips as many places as teams shared. A challenge ranks either by its
primary score, or (GlaS) by the sum of the ranks a team gets on each criterion,
the sums being ranked the same way (lower sum is better). ``decimals`` rounds
values before they are compared, as the GlaS organizers ranked on three
decimals. A missing or null value of a scored team ranks after every number,
and such teams share that last rank. A team without a score (its submission
rejected, or none scored yet) is not ranked: its rank is ``None`` and it comes
after the ranked teams, by name, as Kaggle and Codabench leave a team without a
score off the ranking (it took the last rank before, which made the only team
of a new contest "rank 1" before anything was scored).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from podium.challenges.base import Challenge, ScoreSpec

if TYPE_CHECKING:
    from podium.ranking.bootstrap import Confidence


def competition_ranks(values: Sequence[float | None], higher_is_better: bool) -> list[int]:
    """``1224`` ranks of ``values``; ``None`` ranks last."""

    def key(v: float | None) -> tuple[int, float]:
        if v is None:
            return (1, 0.0)
        return (0, -v if higher_is_better else v)

    keys = [key(v) for v in values]
    ordered = sorted(keys)
    return [1 + bisect_left(ordered, k) for k in keys]  # 1 + the number of strictly better values


@dataclass
class Team:
    name: str
    status: str
    scores: dict[str, float | int | None]
    ranks: dict[str, int] = field(default_factory=dict)
    rank_sum: int | None = None
    rank: int | None = None  # None: not ranked (no score)
    confidence: Confidence | None = None  # filled by a bootstrap (podium rank --bootstrap)


def ranks_by_sum(challenge: Challenge, by: str | None) -> bool:
    """Whether teams are ranked by their sum of per-criterion ranks: the challenge's rule, unless ``by`` names one score."""
    return challenge.rank_sum and by is None


def rank_teams(
    challenge: Challenge, teams: list[Team], decimals: int | None = None, by: str | None = None
) -> list[ScoreSpec]:
    """Fill in every scored team's per-criterion ranks, rank sum and final rank, sort the teams; return the criteria.

    A team without a score keeps no rank (``None``) and is sorted after the ranked teams, by name.

    ``by`` ranks by that score alone instead of the challenge's rule.
    """
    if by is not None:
        criteria = [ScoreSpec(by, challenge.score_spec(by).higher_is_better, "")]
    else:
        criteria = challenge.ranking_criteria(set().union(*(t.scores for t in teams)) if teams else set())
    ranked = [t for t in teams if t.status == "scored"]
    for spec in criteria:
        values = [_value(t, spec.name, decimals) for t in ranked]
        for team, rank in zip(ranked, competition_ranks(values, bool(spec.higher_is_better))):
            team.ranks[spec.name] = rank
    if ranks_by_sum(challenge, by):
        for team in ranked:
            team.rank_sum = sum(team.ranks.values())
        final = competition_ranks([t.rank_sum for t in ranked], higher_is_better=False)
    else:
        final = [t.ranks[criteria[0].name] for t in ranked]
    for team, rank in zip(ranked, final):
        team.rank = rank
    teams.sort(key=lambda t: (t.rank is None, t.rank or 0, t.name))
    return criteria


def _value(team: Team, name: str, decimals: int | None) -> float | None:
    value = team.scores.get(name)
    if value is None or decimals is None:
        return value
    return round(value, decimals)
