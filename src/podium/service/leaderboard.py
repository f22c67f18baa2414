"""The leaderboard of a track: each team's chosen submission to it, ranked by the track's rule (a contest without tracks is one).

Before the reveal the board shows public-split scores, each team's best
submission by them. After it (the last phase ended, or ``podium reveal``)
it shows private-split scores of each team's final submission, chosen by the
contest's policy:

- ``best``: the submission best by public score (what the public board showed);
- ``last``: the team's last scored submission;
- ``selected``: the best by private score among those the team selected;
  a team that selected none gets its best by public score (as Kaggle does).

A submission's own ranking among its team's uses the contest's ranking rule
(``podium.ranking.ranks.rank_teams``), ties going to the earlier submission. Teams
are then ranked 1224 by the same rule; a team with no scored submission (none
sent, or every one failed) has no rank (``None``) and is listed after the
ranked teams, by name, with its status. A banned team, and one waiting for approval, is not on the board
(:mod:`podium.service.standing`). Without a split, public and private are both the whole test set. Each
submission counts with its result of the newest round it has. In a contest of
programs each row also holds how the program ran (``measured``: time, peak
RAM and their points; :mod:`podium.service.measured`).

When phases name data of their own (a development phase on validation data,
the final phase on the test set), each set of phases scoring on the same
data has a board of its own (``contest.board``, from
:meth:`~podium.contest.Contest.on`): it ranks the submissions made in those
phases only, each scored on their data. The reveal is the contest's, for
every board at once: a board revealed early could show units that a later
phase's private split holds.

Each row also holds the team's ``entries`` (its scored submissions to the
track) and when it sent the last of them (``last``), as Kaggle's board shows;
after the reveal, ``public_rank``: the rank the public board gave the team
(``None`` without a scored submission), so the shake-up can be read beside
the final rank, and ``method``: the method of the ranked submission, when its
team chose to show it (:mod:`podium.service.methods`); never before the reveal.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Text, cast, select

from podium.challenges import get
from podium.contest import Contest
from podium.core.result import PRIVATE, PUBLIC
from podium.ranking.ranks import Team, rank_teams, ranks_by_sum
from podium.service import state
from podium.service.measured import board_measured
from podium.service.methods import METHOD_COLUMNS, method_view
from podium.service.statuses import SCORED
from podium.service.tables import results, submissions, teams


@dataclass
class Entry:
    submission_id: int
    selected: bool
    public: dict[str, Any]
    private: dict[str, Any]
    created: datetime
    method: dict[str, Any] | None = None  # the method, when the team lets the board show it after the reveal


def leaderboard(connection: Connection, contest: Contest, now: datetime) -> dict[str, Any]:
    """The board: public scores until the reveal, then each team's final submission on the private split."""
    return standings(connection, contest, now)[0]


def standings(connection: Connection, contest: Contest, now: datetime) -> tuple[dict[str, Any], dict[str, int]]:
    """The board, and the submission it shows of each team that has one (by team name: for the server's use only)."""
    revealed = state.is_revealed(connection, contest, now)
    shown: dict[str, int] = {}
    spec = get(contest.challenge)
    by, decimals = contest.ranking.by, contest.ranking.decimals
    shown_teams = select(teams.c.id, teams.c.name).where(
        teams.c.contest == contest.id, ~teams.c.banned, teams.c.approved
    )
    names = {row.id: row.name for row in connection.execute(shown_teams)}
    on_board = select(submissions.c.team_id).join(teams).where(teams.c.contest == contest.id, *_on_board(contest))
    submitted = set(connection.execute(on_board.distinct()).scalars())
    entries = _scored_entries(connection, contest, revealed)
    board: list[Team] = []
    public_board: list[Team] = []  # after the reveal: the board as the public split ranked it, for the shake-up
    activity: dict[str, tuple[int, datetime | None]] = {}  # each team's scored entries, and when it sent the last
    described: dict[str, dict[str, Any]] = {}  # after the reveal: the method of each ranked submission its team shows
    for team_id, name in names.items():
        mine = entries.get(team_id, [])
        activity[name] = (len(mine), mine[-1].created if mine else None)
        best = _best(spec, mine, PUBLIC, decimals, by)
        chosen = _final(spec, mine, contest, decimals, by) if revealed else best
        status = "no scored submission" if team_id in submitted else "none"
        if chosen is None:
            board.append(Team(name, status, {}))
        else:
            board.append(Team(name, SCORED, chosen.private if revealed else chosen.public))
            shown[name] = chosen.submission_id
            if revealed and chosen.method is not None:
                described[name] = chosen.method
        if revealed:
            public_board.append(Team(name, status, {}) if best is None else Team(name, SCORED, best.public))
    criteria = rank_teams(spec, board, decimals, by)
    rank_teams(spec, public_board, decimals, by)
    public_ranks = {t.name: t.rank for t in public_board if t.status == SCORED}
    shown_board: dict[str, Any] = {
        "contest": contest.id,
        **({"track": contest.track, "track_title": contest.track_title} if contest.track else {}),
        **({"phases": list(contest.board)} if contest.board else {}),
        "title": contest.title,
        "challenge": contest.challenge,
        "revealed": revealed,
        "split": PRIVATE if revealed else PUBLIC,
        "by": by,
        "decimals": decimals,
        "final": contest.ranking.final,
        "rank_sum": ranks_by_sum(spec, by),
        "criteria": [{"name": c.name, "higher_is_better": c.higher_is_better} for c in criteria],
        "teams": [
            {
                "rank": t.rank,
                "team": t.name,
                "status": t.status,
                "rank_sum": t.rank_sum,
                "ranks": t.ranks,
                "scores": t.scores,
                "entries": activity[t.name][0],
                "last": _time(activity[t.name][1]),
                **({"public_rank": public_ranks.get(t.name)} if revealed else {}),
                **({"method": described[t.name]} if t.name in described else {}),
            }
            for t in board
        ],
    }
    if any(
        phase.submissions == "programs" for phase in contest.phases
    ):  # time and RAM decide the rank too: shown beside the scores
        shown_board["measured"] = board_measured(connection, shown_board, shown)
    return shown_board, shown


def _on_board(contest: Contest) -> list[Any]:
    """The conditions of a submission on the board, beside its team's ``teams.contest == contest.id`` (the callers join
    ``teams``: track ids repeat across contests): to its track, and made in one of the board's phases (when phases
    name data)."""
    on_track = submissions.c.track == contest.track_id
    return [on_track, submissions.c.phase.in_(contest.board)] if contest.board else [on_track]


def _time(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def scored_entries(connection: Connection, contest: Contest) -> dict[str, list[Entry]]:
    """Every team's submissions on the board of ``contest`` that are scored in their newest round, oldest first, by team name."""
    names = {
        row.id: row.name
        for row in connection.execute(select(teams.c.id, teams.c.name).where(teams.c.contest == contest.id))
    }
    return {names[team_id]: found for team_id, found in _scored_entries(connection, contest).items()}


def _scored_entries(connection: Connection, contest: Contest, revealed: bool = False) -> dict[int, list[Entry]]:
    """Every team's submissions on the board of ``contest`` that are scored in their newest round, oldest first.

    One statement reads the results of the board's submissions only: those of the
    contest's teams (``teams.contest``: track ids repeat across contests) on its
    track and phases, through the indexes on ``teams (contest, name)``,
    ``submissions (track, team_id, created)`` and ``results (submission_id, round)``;
    its rows come by submission, newest round last. The private scores and the
    methods are read only once ``revealed`` (before, an entry's ``private`` is
    empty and its ``method`` ``None``). The scores come as the database's JSON
    text, decoded in one :func:`json.loads` of them all: a call per row cost
    half the board (2 x 200,000 calls for a contest of 200,000 submissions).
    """
    revealed_columns = (cast(results.c.private_scores, Text), *(submissions.c[n] for n in METHOD_COLUMNS))
    query = (
        select(
            submissions.c.id,
            submissions.c.team_id,
            submissions.c.selected,
            submissions.c.created,
            results.c.status,
            cast(results.c.public_scores, Text),
            *(revealed_columns if revealed else ()),
        )
        .join(teams, teams.c.id == submissions.c.team_id)
        .join(results, results.c.submission_id == submissions.c.id)
        .where(teams.c.contest == contest.id, *_on_board(contest))
        .order_by(submissions.c.created, submissions.c.id, results.c.round)
    )
    newest: dict[int, Any] = {}
    for row in connection.execute(query).all():  # fetched at once: a fetch per row cost a fifth of the board
        newest[row.id] = row  # a later round replaces an earlier one; the order of first appearance is kept
    scored = [row for row in newest.values() if row.status == SCORED]
    public = json.loads("[" + ",".join(row[5] for row in scored) + "]")
    private = json.loads("[" + ",".join(row[6] for row in scored) + "]") if revealed else [{}] * len(scored)
    entries: dict[int, list[Entry]] = {}
    for row, public_scores, private_scores in zip(scored, public, private):
        method = method_view(row) if revealed and row.method_shown else None
        entry = Entry(row.id, bool(row.selected), public_scores, private_scores, row.created, method)
        entries.setdefault(row.team_id, []).append(entry)
    return entries


def _best(spec: Any, entries: list[Entry], split: str, decimals: int | None, by: str | None) -> Entry | None:
    """The entry ranked first among ``entries`` by ``split`` scores (the earliest of equals).

    Where one criterion ranks (no rank sum), the first is found in one pass, as
    :func:`~podium.ranking.ranks.rank_teams` would place it (its value rounded
    to ``decimals``, a missing value last, ties to the earlier entry): ranking
    every entry cost 40% of a board of 2,000 teams and 142,000 submissions.
    """
    if not entries:
        return None
    scores = [e.public if split == PUBLIC else e.private for e in entries]
    if ranks_by_sum(spec, by):  # an entry's place depends on every other's ranks
        candidates = [Team(f"{index:012d}", SCORED, s) for index, s in enumerate(scores)]
        rank_teams(spec, candidates, decimals, by)  # sorts by (rank, name): the earliest of the best first
        return entries[int(candidates[0].name)]
    criterion = spec.score_spec(by) if by is not None else spec.ranking_criteria(set().union(*scores))[0]
    name, higher = criterion.name, bool(criterion.higher_is_better)

    def key(index: int) -> tuple[int, float, int]:
        value = scores[index].get(name)
        if value is None:
            return (1, 0.0, index)
        value = value if decimals is None else round(value, decimals)
        return (0, -value if higher else value, index)

    return entries[min(range(len(entries)), key=key)]


def _final(spec: Any, entries: list[Entry], contest: Contest, decimals: int | None, by: str | None) -> Entry | None:
    policy = contest.ranking.final
    if policy == "last":
        return entries[-1] if entries else None
    if policy == "selected":
        selected = [e for e in entries if e.selected]
        if selected:
            return _best(spec, selected, PRIVATE, decimals, by)
    return _best(spec, entries, PUBLIC, decimals, by)
