"""A contest's leaderboard columns on a platform: the ranking criteria first, then every other score with a direction.

Platforms sort by one column, then the next (Codabench: by column index 0,
ties broken left to right; EvalAI: by ``default_order_by``). So the first
column is the contest's ranking score (``[ranking] by``, else the challenge's
rule). A rule that ranks by a *sum of ranks* (GlaS: six criteria over Test A
and B) cannot be written as a column order: the columns then hold the
criteria in the rule's order, and :func:`rank_note` says so, for the
competition's pages; ``podium rank`` on the results gives the official order.
"""

from __future__ import annotations

from dataclasses import dataclass

from podium.challenges import get
from podium.contest import Contest
from podium.core.errors import UsageError
from podium.core.parameters import resolve
from podium.ranking.ranks import ranks_by_sum

DEFAULT_DECIMALS = 4


@dataclass(frozen=True)
class Column:
    key: str  # the score's name in podium's document, and the key the scoring program writes
    higher_is_better: bool
    help: str


def columns(contest: Contest) -> list[Column]:
    """The leaderboard columns of ``contest``, the one that ranks first.

    Platforms score submitted files, so a score that needs a measured time or
    memory (face-clustering's ``final``) is never defined there: it is no
    column, and a contest that ranks by it is refused (:class:`UsageError`),
    rather than ranking every team last alike.
    """
    challenge = get(contest.challenge)
    if contest.ranking.by is not None:
        names = [contest.ranking.by]
    else:
        names = [spec.name for spec in challenge.leaderboard_criteria(resolve(challenge.parameters, contest.settings))]
    measured = [name for name in names if challenge.score_spec(name).measured]
    if measured:
        others = [
            s.name for s in challenge.scores if s.higher_is_better is not None and not s.family and not s.measured
        ]
        raise UsageError(
            f"contest {contest.id} ranks by {', '.join(measured)}, which needs the running time and memory that podium run measures: "
            f"on a platform, where submissions are files, it is never defined. To host the contest there, rank by a score of the files "
            f"([ranking] by = one of {', '.join(others)}), or run it with podium serve"
        )
    names += [
        spec.name
        for spec in challenge.scores
        if spec.higher_is_better is not None and not spec.family and not spec.measured and spec.name not in names
    ]
    return [
        Column(name, bool(challenge.score_spec(name).higher_is_better), challenge.score_spec(name).help)
        for name in names
    ]


def decimals(contest: Contest) -> int:
    """The decimals a platform shows: the contest's ranking decimals, else :data:`DEFAULT_DECIMALS`."""
    return contest.ranking.decimals if contest.ranking.decimals is not None else DEFAULT_DECIMALS


def rank_note(contest: Contest) -> str | None:
    """Why the platform's order is not the official one, when the rule ranks by a sum of ranks."""
    challenge = get(contest.challenge)
    if not ranks_by_sum(challenge, contest.ranking.by):
        return None
    return (
        f"{challenge.title} ranks teams by the sum of their ranks over the first "
        f"{len(challenge.leaderboard_criteria(resolve(challenge.parameters, contest.settings)))} columns. "
        "A platform sorts by the first column and breaks ties with the next, so its order is not the official one: "
        "download the results and run `podium rank --contest contest.toml RESULT.json...` for the official ranks."
    )
