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
    reference = reference_of(contest)
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
    if contest.split is not None:
        generated["scoring_program_private/metadata.yaml"] = _yaml(_program(PRIVATE, keys))
    target.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(target, "w") as archive:
        for name, data in sorted(generated.items()):
            add_member(archive, name, data)
        reference.add_to_zip(archive, "reference_data/")
        return archive.namelist()


def competition(contest: Contest, image: str, shown_columns: list[Column]) -> dict[str, Any]:
    """The content of ``competition.yaml``."""
    challenge = get(contest.challenge)
    split = contest.split is not None
    tasks = [_task(0, contest, "the public split" if split else "the test set", "scoring_program/")]
    if split:
        tasks.append(_task(1, contest, "the private split", "scoring_program_private/"))
    phases = [
        {
            "index": i,
            "name": phase.name,
            "description": f"Scored on {'the public split' if split else 'the test set'} by podium {__version__}.",
            "start": utc_text(phase.start),
            "end": utc_text(phase.end),
            "tasks": [0],
            "execution_time_limit": time_limit(contest),
            **_quota(contest),
        }
        for i, phase in enumerate(contest.phases)
    ]
    if split:
        phases.append(
            {
                "index": len(phases),
                "name": FINAL_PHASE,
                "description": "When the last phase closes, every submission on its leaderboard moves here and is scored on the private split.",
                "start": utc_text(contest.phases[-1].end.replace(microsecond=0) + FINAL_GAP),
                "tasks": [1],
                "execution_time_limit": time_limit(contest),
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


def _task(index: int, contest: Contest, part: str, program: str) -> dict[str, Any]:
    return {
        "index": index,
        "name": f"{contest.id}: {part}",
        "description": f"{contest.challenge} scored on {part} by podium {__version__}",
        "scoring_program": program,
        "reference_data": "reference_data/",
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
