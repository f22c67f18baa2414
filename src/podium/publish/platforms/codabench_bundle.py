"""A Codabench competition bundle from a contest file: ``podium bundle codabench --contest contest.toml -o bundle.zip``.

The bundle is a zip with ``competition.yaml`` (version 2) at its top, the
files it names, and the scoring image's Dockerfile
(https://docs.codabench.org/latest/Organizers/Benchmark_Creation/Competition-Bundle-Structure/
and .../Yaml-Structure/; Codabench's unpacker, ``src/apps/competitions/unpackers/v2.py``,
requires ``title``, ``image``, ``terms``, ``pages``, ``tasks`` (each with a
scoring program), ``phases`` (each with tasks, in order, not overlapping) and
``leaderboards``)::

    competition.yaml
    logo.png, pages/overview.md, pages/terms.md     (terms: the organizers' to write)
    scoring_program/metadata.yaml                   podium codabench --split public --keys ...
    scoring_program_private/metadata.yaml           the same with --split private (contests with a split)
    reference_data/                                 the contest's reference folder (podium.publish.platforms.reference)
    scoring_image/Dockerfile, scoring_image/README.md

Phases are the contest's, in UTC (Codabench reads a date's clock time and
drops its offset), to the second. Codabench refuses a phase that starts when
the one before it ends (``Phases dates conflict``, its unpacker's
``_validate_phase_ordering``), which a contest file allows: such a contest is
refused here with the phases named (:func:`codabench_conflicts`; ``podium
contest check`` warns of it). With a public/private split, every phase scores
the public units, and a last phase, "final ranking (private split)", opens
:data:`FINAL_GAP` after the last one closes: Codabench moves into it
(``auto_migrate_to_this_phase``) every submission on the last phase's
leaderboard (the ``submission_rule`` keeps each team's latest, best or
selected ones there; earlier phases are not moved) and scores the private units
there, so no private number exists before the end. Quotas and the final-submission policy
map to ``max_submissions_per_day``, ``max_submissions`` and ``submission_rule``.

When phases name data of their own (:meth:`podium.contest.Contest.on`), each
board has its reference folder (``reference_data_1/``, ``reference_data_2/``, ...,
in the order of their first phases) and its task, and each Codabench phase
scores on its board's task: a development phase on the validation data, the
final phase on the test set. The final ranking's phase scores the private
split of the last phase's board; an earlier board's private split, if it has
one, is not scored on Codabench.
"""

from __future__ import annotations

import io
import math
import shlex
import zipfile
from datetime import timedelta
from pathlib import Path
from typing import Any

import yaml
from PIL import Image

from podium._version import __version__
from podium.challenges import get
from podium.contest import Contest
from podium.core.errors import UsageError
from podium.core.result import PRIVATE, PUBLIC
from podium.publish.platforms.codabench import INPUT, OUTPUT
from podium.publish.platforms.columns import Column, columns, decimals, rank_note
from podium.publish.platforms.image import DOCKERFILE
from podium.publish.platforms.reference import add_member, local_command, reference_of, utc_text
from podium.publish.platforms.scores import SENTINEL

SUBMISSION_RULES = {
    "best": "Force_Best",
    "last": "Force_Last",
}  # "selected": Add_And_Delete(_Multiple), by max_selected
FINAL_PHASE = "final ranking (private split)"
FINAL_GAP = timedelta(seconds=1)  # Codabench: a phase must start after the one before it has ended
TIME_LIMIT_S = (
    300  # a fresh container compiles Numba's kernels: 40 s for GlaS here, 60 s on a loaded worker; five times that
)
TIME_LIMIT_PER_UNIT_S = 0.01  # reading and scoring, far above the measured rates (benchmarks/README.md)


def time_limit(contest: Contest) -> int:
    """The phases' ``execution_time_limit`` in seconds: room for a fresh container's compilation and the test set's size (Codabench's default is 600)."""
    return TIME_LIMIT_S + math.ceil(contest.units * TIME_LIMIT_PER_UNIT_S)


def codabench_conflicts(contest: Contest) -> list[str]:
    """Each pair of the contest's phases that Codabench would refuse: the second starts when the first ends (to the second)."""
    return [
        f"phase {after.name!r} starts when phase {before.name!r} ends ({utc_text(before.end)}): Codabench refuses phases that touch "
        f'("Phases dates conflict"); start {after.name!r} at least 1 s later to host the contest there'
        for before, after in zip(contest.phases, contest.phases[1:])
        if utc_text(after.start) <= utc_text(before.end)
    ]


def write_bundle(contest: Contest, image: str, target: Path) -> list[str]:
    """Write the bundle of ``contest`` to ``target``; return its member names.

    A contest whose phases Codabench would refuse (:func:`codabench_conflicts`) is refused: :class:`UsageError`.
    """
    conflicts = codabench_conflicts(contest)
    if conflicts:
        raise UsageError(f"contest {contest.id}: " + "; ".join(conflicts))
    references = [(reference_of(board), folder) for board, folder in _boards(contest)]
    shown_columns = columns(contest)
    keys = [c.key for c in shown_columns]
    generated: dict[str, bytes] = {
        "competition.yaml": _yaml(competition(contest, image, shown_columns)),
        "logo.png": _logo(),
        "pages/overview.md": overview(contest, shown_columns).encode(),
        "pages/terms.md": (
            f"# Terms of {contest.title}\n\nThese terms are the organizers' to write: podium wrote this page only so that "
            "the bundle loads. Replace it before publishing the competition.\n"
        ).encode(),
        "scoring_program/metadata.yaml": _yaml(_program(PUBLIC, keys)),
        "scoring_image/Dockerfile": DOCKERFILE.encode(),
        "scoring_image/README.md": _image_readme(image).encode(),
    }
    if _final_board(contest).split is not None:
        generated["scoring_program_private/metadata.yaml"] = _yaml(_program(PRIVATE, keys))
    target.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(target, "w") as archive:
        for name, data in sorted(generated.items()):
            add_member(archive, name, data)
        for reference, folder in references:
            reference.add_to_zip(archive, folder)
        return archive.namelist()


def _boards(contest: Contest) -> list[tuple[Contest, str]]:
    """Each board of the track with its reference folder in the bundle: one, ``reference_data/``, unless phases name data."""
    if not contest.by_phase:
        return [(contest, "reference_data/")]
    return [(board, f"reference_data_{number}/") for number, board in enumerate(contest.by_phase, start=1)]


def _final_board(contest: Contest) -> Contest:
    """The board of the track's last phase, whose private split gives the final ranking."""
    if not contest.by_phase:
        return contest
    last = [p.name for p in contest.phases if any(p.name in b.board for b in contest.by_phase)][-1]
    return next(b for b in contest.by_phase if last in b.board)


def competition(contest: Contest, image: str, shown_columns: list[Column]) -> dict[str, Any]:
    """The content of ``competition.yaml``."""
    challenge = get(contest.challenge)
    final = _final_board(contest)
    split = final.split is not None
    tasks: list[dict[str, Any]] = []
    task_of: dict[tuple[str, ...], int] = {}
    references = _boards(contest)
    for board, folder in references:
        part = "the public split" if board.split is not None else "the test set"
        task_of[board.board] = len(tasks)
        tasks.append(_task(len(tasks), board, part, "scoring_program/", folder))
    if split:
        folder = next(folder for board, folder in references if board is final)
        tasks.append(_task(len(tasks), final, "the private split", "scoring_program_private/", folder))
    boards = {name: board for board in contest.boards() for name in board.board}
    phases: list[dict[str, Any]] = []
    for phase in contest.phases:
        scored = boards.get(phase.name) if contest.by_phase else contest
        if scored is None:
            continue  # a phase that does not open this track
        phases.append(
            {
                "index": len(phases),
                "name": phase.name,
                "description": f"Scored on {'the public split' if scored.split is not None else 'the test set'}"
                f"{' of this phase' if contest.by_phase else ''} by podium {__version__}.",
                "start": utc_text(phase.start),
                "end": utc_text(phase.end),
                "tasks": [task_of[scored.board]],
                "execution_time_limit": time_limit(scored),
                **_quota(contest),
            }
        )
    if split:
        phases.append(
            {
                "index": len(phases),
                "name": FINAL_PHASE,
                "description": "When the last phase closes, every submission on its leaderboard moves here and is scored on the private split.",
                "start": utc_text(contest.phases[-1].end.replace(microsecond=0) + FINAL_GAP),
                "tasks": [len(tasks) - 1],
                "execution_time_limit": time_limit(final),
                "auto_migrate_to_this_phase": True,
            }
        )
    return {
        "version": 2,
        "title": contest.title,
        "description": f"{challenge.title}, scored by podium {__version__} as the official rules say.",
        "image": "logo.png",
        "registration_auto_approve": False,
        "docker_image": image,
        "enable_detailed_results": True,
        "terms": "pages/terms.md",
        "pages": [{"title": "Overview", "file": "pages/overview.md"}],
        "tasks": tasks,
        "phases": phases,
        "leaderboards": [
            {
                "title": "Results",
                "key": "main",
                "submission_rule": _submission_rule(contest),
                "columns": [
                    {
                        "title": c.key,
                        "key": c.key,
                        "index": i,
                        "sorting": "desc" if c.higher_is_better else "asc",
                        "precision": decimals(contest),
                    }
                    for i, c in enumerate(shown_columns)
                ],
            }
        ],
    }


def _task(index: int, board: Contest, part: str, program: str, reference: str) -> dict[str, Any]:
    phases = f", phase {', '.join(board.board)}" if board.board else ""
    return {
        "index": index,
        "name": f"{board.id}{phases}: {part}",
        "description": f"{board.challenge} scored on {part}{phases} by podium {__version__}",
        "scoring_program": program,
        "reference_data": reference,
    }


def _quota(contest: Contest) -> dict[str, int]:
    quota = {"max_submissions_per_day": contest.quota.per_day, "max_submissions": contest.quota.total}
    return {key: value for key, value in quota.items() if value is not None}


def _submission_rule(contest: Contest) -> str:
    if contest.ranking.final == "selected":
        return "Add_And_Delete" if contest.ranking.max_selected == 1 else "Add_And_Delete_Multiple"
    return SUBMISSION_RULES[contest.ranking.final]


def _program(split: str, keys: list[str]) -> dict[str, str]:
    """A scoring program's ``metadata.yaml``: podium is in the image, so the command is all there is."""
    command = f"podium codabench --input {INPUT} --output {OUTPUT} --split {split} --keys {shlex.quote(','.join(keys))}"
    return {"command": command, "description": f"podium {__version__}: scores the {split} split"}


def overview(contest: Contest, shown_columns: list[Column]) -> str:
    """The overview page: the challenge, the columns and what an undefined score becomes."""
    challenge = get(contest.challenge)
    lines = [
        f"# {contest.title}",
        "",
        f"Challenge: **{challenge.title}** (`{challenge.id}`); official rules: {challenge.rules}.",
        f"Submissions are scored by podium {__version__}, which reports every problem "
        "of a submission with its file and line in the submission's logs. To get the same score on your machine: "
        f"`{local_command(contest)}`.",
        "",
        "Upload a zip of your files, or of one folder that holds them (Codabench takes zip files only); "
        "the same zip gives the same score with `podium evaluate`.",
        "",
        "## Leaderboard",
        "",
        "| column | better | meaning |",
        "| --- | --- | --- |",
        *(f"| `{c.key}` | {'higher' if c.higher_is_better else 'lower'} | {c.help} |" for c in shown_columns),
        "",
        f"The leaderboard sorts by `{shown_columns[0].key}`, then by the next columns. An undefined score is shown as "
        f"{-SENTINEL} where higher is better and {SENTINEL} where lower is better, so that it ranks last.",
    ]
    note = rank_note(contest)
    if note:
        lines += ["", note]
    if contest.split is not None:
        kept = {"last": "latest", "best": "best", "selected": "selected"}[contest.ranking.final]
        lines += [
            "",
            f"During the phases the leaderboard shows the public split of the test set. When the last phase "
            f"({contest.phases[-1].name}) closes, every submission on its leaderboard (each team's {kept} "
            f'submission of that phase) is scored on the private split in the phase "{FINAL_PHASE}", which gives the final '
            "ranking. Submissions of earlier phases are not moved: submit your final choice again in the last phase.",
        ]
    return "\n".join(lines) + "\n"


def _image_readme(image: str) -> str:
    return (
        "# The scoring image\n\n"
        f"competition.yaml names the image `{image}`. Build it from the podium checkout this bundle was made with "
        f"(podium {__version__}) and push it where Codabench's workers can pull it:\n\n"
        f"    docker build -t {image} -f scoring_image/Dockerfile PATH/TO/podium\n    docker push {image}\n"
    )


def _yaml(data: dict[str, Any]) -> bytes:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=120).encode()


def _logo() -> bytes:
    """A plain 200x200 logo (Codabench requires one); replace it with the competition's."""
    buffer = io.BytesIO()
    Image.new("RGB", (200, 200), (38, 70, 83)).save(buffer, format="PNG")
    return buffer.getvalue()
