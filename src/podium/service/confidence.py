"""The leaderboard page's rank confidence: a paired bootstrap over the shown split's units.

Until the reveal the board is the public split's, so the resampled rows are
the public units' only: the intervals tell nothing of the private split.
The bootstrap (:mod:`podium.ranking.bootstrap`, :data:`RESAMPLES` resamples, seed 0)
is kept per set of shown results, so a page view costs it once per change of
the board. Results that cannot be resampled together (scored on different
units, after a rescore on another truth) leave the board without intervals,
never without its page.
"""

from __future__ import annotations

import logging
from typing import Any

from sqlalchemy import Connection

from podium.challenges import get
from podium.contest import Contest
from podium.core.errors import PodiumError
from podium.ranking.bootstrap import Confidence, bootstrap, resamplable
from podium.ranking.documents import parse_units
from podium.ranking.ranks import ranks_by_sum
from podium.service.tables import results
from podium.service.views import newest_results

log = logging.getLogger("podium.service")
RESAMPLES = 1000
KEPT = 16  # boards whose bootstrap is kept


def board_confidence(
    cache: dict[Any, dict[str, Confidence]],
    connection: Connection,
    contest: Contest,
    board: dict[str, Any],
    shown: dict[str, int],
) -> dict[str, Confidence] | None:
    """Each ranked team's :class:`Confidence` on the board's split, or ``None`` when the challenge cannot be resampled.

    ``board`` and ``shown`` are :func:`~podium.service.leaderboard.standings`; ``cache`` keeps the bootstraps.
    """
    spec = get(contest.challenge)
    if not resamplable(spec):
        return None
    found = newest_results(
        connection, list(shown.values()), (results.c.submission_id, results.c.id, results.c.document)
    )
    key = (board["split"], tuple(sorted((team, found[i].id) for team, i in shown.items() if i in found)))
    if key not in cache:
        names = [team for team, i in shown.items() if i in found]
        documents = [found[shown[team]].document for team in names]
        if not names or any("units" not in d for d in documents):
            return None
        tables = [
            parse_units(f"submission {shown[team]}", d["units"], board["split"]) for team, d in zip(names, documents)
        ]
        criteria = spec.ranking_criteria(set().union(*(t["scores"] for t in board["teams"])))
        if contest.ranking.by is not None:
            criteria = [spec.score_spec(contest.ranking.by)]
        try:
            confidences = bootstrap(
                spec,
                criteria,
                ranks_by_sum(spec, contest.ranking.by),
                tables,
                RESAMPLES,
                decimals=contest.ranking.decimals,
            )
        except (
            PodiumError
        ) as exc:  # results that cannot be resampled together (scored on different units): the board without intervals
            log.warning("no bootstrap intervals on the leaderboard: %s", exc)
            return None
        if len(cache) >= KEPT:
            cache.pop(next(iter(cache)))
        cache[key] = {team: c for team, c in zip(names, confidences) if c is not None}
    return cache[key]
