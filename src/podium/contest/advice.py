"""What ``podium contest check`` warns of: a valid contest file that will not do what its organizers likely meant.

- a part with no unit in a split (GlaS's ``parts`` with a ``public_list`` of
  Test A only): that split's scores of the part are none, for every team;
- ``[limits] time_s`` below the rules' disqualification time ``th2_s``: the
  program is stopped first, so the rule's disqualification never applies.
"""

from __future__ import annotations

from podium.challenges import get
from podium.contest.definition import Contest
from podium.core.parameters import resolve
from podium.core.result import PRIVATE, PUBLIC


def warnings(contest: Contest) -> list[str]:
    """Each warning about ``contest``, a sentence each."""
    challenge = get(contest.challenge)
    params = resolve(challenge.parameters, contest.settings)
    found: list[str] = []
    th2 = params.get("th2_s")
    time_s = contest.limits.time_s
    if time_s is not None and isinstance(th2, (int, float)) and time_s < th2:
        found.append(
            f"[limits] time_s = {time_s:g} is below th2_s = {th2:g}: a program is stopped first, so the rules' disqualification time is never reached"
        )
    if contest.split is not None:
        subsets: dict[str, list[str]] = {}  # a part -> the splits that hold none of its units
        for spec in challenge.leaderboard_criteria(params):
            _, within = challenge.units_of_score(spec.name)
            part = spec.name.partition("/")[2]
            if within is None or part in subsets:
                continue
            held = {split for unit, split in contest.split.split_of.items() if within(unit)}
            subsets[part] = [split for split in (PUBLIC, PRIVATE) if split not in held]
        for part, empty in subsets.items():
            if empty:
                found.append(
                    f"part {part} has no unit in the {' and '.join(empty)} split: its scores there are none for every team"
                )
    return found
