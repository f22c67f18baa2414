"""Rank confidence: a paired bootstrap over the test set's units.

Every team's result document holds the additive statistics of each unit
(``units``: an image, a photo). A resample draws N units with replacement,
the same draw for every team (paired), so each team's statistics in that
resample are ``w @ rows`` where ``w`` counts how often each unit was drawn;
the challenge turns those sums into scores (:meth:`Challenge.scores_of_sums`),
and the teams are ranked as on the leaderboard (:func:`podium.ranking.ranks.rank_teams`
rules: 1224 ranks, rank sums, rounding to ``decimals``, missing values last).

For each team it reports the percentile interval of its score and of its rank
at the given level (95% by default: the 2.5th and 97.5th percentiles, by
``numpy.percentile``'s linear method for scores and its ``inverted_cdf`` for
ranks, which stay whole numbers), and its share of the first places: each
resample's first place split evenly among the teams tied there, so that the
shares of all teams sum to 1. Efron & Tibshirani, *An Introduction to the Bootstrap* (1993),
ch. 13; the same paired resampling ranks the GlaS teams in Sirinukunwattana et
al., *Gland segmentation in colon histology images: The GlaS challenge
contest*, Medical Image Analysis 35 (2017).

>>> ranks_of(np.array([[0.9, 0.8, 0.8], [0.1, np.nan, 0.3]]), higher_is_better=True)
array([[1, 2, 2],
       [2, 3, 1]])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from podium.challenges.base import Challenge, ScoreSpec
from podium.core.errors import PodiumError
from podium.ranking.documents import Units

CHUNK = 64  # resamples drawn at once: CHUNK x units weights in memory


@dataclass(frozen=True)
class Interval:
    low: float | None
    high: float | None

    def to_list(self) -> list[float | None]:
        return [self.low, self.high]


@dataclass(frozen=True)
class Confidence:
    """One team's bootstrap: its score's and rank's intervals, and its share of the first places (ties split them)."""

    score: Interval
    rank: Interval
    first: float

    def to_dict(self) -> dict[str, Any]:
        return {"score": self.score.to_list(), "rank": self.rank.to_list(), "first": self.first}


def ranks_of(values: NDArray[np.float64], higher_is_better: bool) -> NDArray[np.int64]:
    """1224 ranks of every row of ``values`` (resamples x teams); NaN ranks last."""
    keys = np.where(np.isnan(values), np.inf, -values if higher_is_better else values)
    better = keys[:, None, :] < keys[:, :, None]  # [r, i, j]: team j is strictly better than team i
    return 1 + better.sum(axis=2)


def resamplable(challenge: Challenge) -> bool:
    """Whether ``challenge`` computes its scores from sums of unit statistics."""
    return type(challenge).scores_of_sums is not Challenge.scores_of_sums


def bootstrap(
    challenge: Challenge,
    criteria: list[ScoreSpec],
    rank_sum: bool,
    tables: Sequence[Units | None],
    resamples: int,
    *,
    seed: int = 0,
    level: float = 0.95,
    decimals: int | None = None,
) -> list[Confidence | None]:
    """Each team's :class:`Confidence` (``None`` for a team without rows: rejected), in the order of ``tables``.

    ``tables`` are the teams' unit statistics; every team that has them must
    have the same columns and units. The first criterion is the score
    reported, as on the leaderboard.
    """
    present = [t for t in tables if t is not None]
    if not present:
        return [None] * len(tables)
    columns, keys = present[0].columns, sorted(present[0].rows)
    if not keys:
        raise PodiumError("no unit to resample")
    if any(t.columns != columns for t in present):
        raise PodiumError("the results' unit statistics have different columns")
    if any(sorted(t.rows) != keys for t in present):
        raise PodiumError("the results were not scored on the same units; a paired bootstrap needs the same test set")
    pooled = [challenge.units_of_score(spec.name) for spec in criteria]  # (base score, units it pools)
    try:  # columns the challenge does not compute from (a document that is not podium's) fail here, named
        probe = challenge.scores_of_sums(columns, np.zeros((1, len(columns))))
        if any(np.shape(probe[base]) != (1,) for base, _ in pooled):
            raise ValueError(columns)
    except (ValueError, IndexError, KeyError):
        raise PodiumError(
            f"the unit statistics' columns {', '.join(columns)[:200]} are not those of {challenge.id}"
        ) from None
    masks = [None if within is None else np.array([within(k) for k in keys]) for _, within in pooled]
    matrices = [None if t is None else np.array([t.rows[k] for k in keys], dtype=np.float64) for t in tables]
    teams = [i for i, matrix in enumerate(matrices) if matrix is not None]
    stacked = np.stack([m for m in matrices if m is not None])  # teams x units x columns
    rng = np.random.default_rng(seed)
    n = len(keys)
    first_scores: list[NDArray[np.float64]] = []
    final_ranks: list[NDArray[np.int64]] = []
    for start in range(0, resamples, CHUNK):
        size = min(CHUNK, resamples - start)
        draws = rng.integers(0, n, size=(size, n))
        # each row's counts of each unit: one bincount over the rows' draws offset apart
        offsets = (draws + n * np.arange(size)[:, None]).ravel()
        weights = np.bincount(offsets, minlength=size * n).reshape(size, n).astype(np.float64)
        per_criterion = []
        for (base, _), mask in zip(pooled, masks):
            values = np.full((size, len(tables)), np.nan)
            if mask is None or mask.any():  # a score over no unit (a part with no image in the split) is none
                # every team's sums at once (teams x resamples x columns), scored in one call
                sums = weights @ stacked if mask is None else weights[:, mask] @ stacked[:, mask]
                scored = challenge.scores_of_sums(columns, sums.reshape(-1, len(columns)))[base]
                values[:, teams] = scored.reshape(len(teams), size).T
            per_criterion.append(values)
        first_scores.append(per_criterion[0])
        rounded = [np.round(v, decimals) if decimals is not None else v for v in per_criterion]
        ranks = [ranks_of(v, bool(spec.higher_is_better)) for v, spec in zip(rounded, criteria)]
        if rank_sum:
            sums = np.sum(ranks, axis=0).astype(np.float64)
            sums[:, [m is None for m in matrices]] = np.nan
            final_ranks.append(ranks_of(sums, higher_is_better=False))
        else:
            final_ranks.append(ranks[0])
    scores, all_ranks = np.concatenate(first_scores), np.concatenate(final_ranks)
    firsts = all_ranks == 1
    first_shares = firsts / np.maximum(firsts.sum(axis=1, keepdims=True), 1)  # a tie for first shares it
    tail = 100 * (1 - level) / 2
    confidences: list[Confidence | None] = []
    for team, matrix in enumerate(matrices):
        if matrix is None:
            confidences.append(None)
            continue
        finite = scores[:, team][~np.isnan(scores[:, team])]
        score = (
            Interval(*(float(v) for v in np.percentile(finite, [tail, 100 - tail])))
            if finite.size
            else Interval(None, None)
        )
        rank = Interval(*(int(v) for v in np.percentile(all_ranks[:, team], [tail, 100 - tail], method="inverted_cdf")))
        confidences.append(Confidence(score, rank, float(np.mean(first_shares[:, team]))))
    return confidences
