"""EvalAI: the ``evaluate`` function of a challenge's evaluation script, and the leaderboard part of ``challenge_config.yaml``.

EvalAI's worker imports the challenge's evaluation script and calls
``evaluate(test_annotation_file, user_submission_file, phase_codename,
**kwargs)``, which returns ``{"result": [{split_codename: {label: number}},
...], "submission_result": ...}``: each entry fills the leaderboard of one
dataset split, and ``submission_result`` is the result file the participant
reads (https://evalai.readthedocs.io/en/latest/evaluation_scripts.html; the
starter kit github.com/Cloud-CV/EvalAI-Starters, ``evaluation_script/main.py``).
Which split a participant may see is set per phase and split in
``challenge_config.yaml`` (``challenge_phase_splits``, ``visibility``: 1 host
only, 3 public; https://evalai.readthedocs.io/en/latest/configuration.html).

podium's public and private splits become the dataset splits ``public_split``
and ``private_split`` (a contest without a split: ``test_split``); the private
one is visible to the host only until the host changes that, and it is not in
``submission_result``. The annotation file is a reference folder as a .tar.gz
(``podium bundle evalai``), or a plain truth file with ``challenge=`` given.
Every phase scores on its ``test_annotation_file``; ``phase_codename`` is only
logged. When phases name data of their own, each board has its annotation file
(``annotations/<contest id>-1.tar.gz``, ...), each EvalAI phase names its
board's, and its phase splits are its board's splits.
"""

from __future__ import annotations

import html
import re
import tempfile
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from podium._version import __version__
from podium.challenges import get
from podium.contest import Contest
from podium.core.errors import PodiumError, UsageError
from podium.core.result import PRIVATE, PUBLIC, SCORED
from podium.formats.archives import ArchiveLimits, ArchiveProblem, inside, kind_of, unpack
from podium.publish.platforms.columns import columns, decimals
from podium.publish.platforms.reference import CONTEST_FILE, local_command, locate, reference_of
from podium.publish.platforms.scores import log_lines, numbers_only, shown
from podium.scoring.engine import default_workers
from podium.scoring.engine import evaluate as evaluate_submission

CODENAMES = {PUBLIC: "public_split", PRIVATE: "private_split", None: "test_split"}
TRUTH_LIMITS = ArchiveLimits(max_entries=2_000_000, max_bytes=1 << 40, max_ratio=10_000.0)  # the host's own file


class SubmissionRejected(PodiumError):
    """A submission with problems: EvalAI marks it failed and shows this message (every problem) to the participant."""


def evaluate(
    test_annotation_file: str,
    user_submission_file: str,
    phase_codename: str,
    *,
    challenge: str | None = None,
    settings: Sequence[str] = (),
    **kwargs: Any,
) -> dict[str, Any]:
    """Score ``user_submission_file`` (a file, or a zip or tar.gz of a folder) as EvalAI's worker asks."""
    print(f"podium: scoring for phase {phase_codename}")
    with tempfile.TemporaryDirectory(prefix="podium-evalai-") as folder:
        reference, truth = _reference(Path(test_annotation_file), Path(folder))
        setup = locate(reference, challenge, truth, settings)
        submission = Path(user_submission_file)
        result = evaluate_submission(
            setup.challenge, setup.truth, submission, setup.settings, workers=default_workers(), **setup.evaluation()
        )
    lines = log_lines(result, submission)
    print("\n".join(lines))
    if result.status != SCORED:
        raise SubmissionRejected("\n".join(lines))
    entries = []
    for split in (PUBLIC, PRIVATE) if result.splits is not None else (PUBLIC,):
        part = shown(result, split)
        numbers, notes = numbers_only(result.challenge, part.scores)
        for note in notes:
            print(note)
        entries.append({CODENAMES[part.split]: numbers})
    return {"result": entries, "submission_result": entries[0]}


def _reference(annotation: Path, folder: Path) -> tuple[Path, str | None]:
    """The reference folder and the truth's name in it: the annotation archive unpacked in ``folder``, or a plain file's own folder."""
    if not annotation.is_file():
        raise UsageError(f"the test annotation file {annotation} does not exist")
    if kind_of(annotation) == "file":
        return annotation.parent, None if annotation.name == CONTEST_FILE else annotation.name
    try:
        return inside(unpack(annotation, annotation.name, folder / "reference", TRUTH_LIMITS)), None
    except ArchiveProblem as exc:
        raise UsageError(f"the test annotation file {annotation}: {exc}") from None


def annotation_files(contest: Contest) -> list[tuple[Contest, str]]:
    """Each board of the track with its annotation file in the kit: one unless phases name data of their own."""
    if not contest.by_phase:
        return [(contest, f"annotations/{contest.id}.tar.gz")]
    return [(board, f"annotations/{contest.id}-{n}.tar.gz") for n, board in enumerate(contest.by_phase, start=1)]


def config(contest: Contest, annotated: list[tuple[Contest, str]]) -> dict[str, Any]:
    """The leaderboard part of ``challenge_config.yaml`` for ``contest``: merge it into the challenge's file.

    ``leaderboard`` (labels: the columns, the first ranks), ``dataset_splits``,
    ``challenge_phases`` (the scoring fields, and a description page each:
    :func:`phase_page`) and ``challenge_phase_splits`` (the private split: host
    only). The final-submission policy (:func:`final_policy`): ``last`` shows
    each team's latest submission (``show_leaderboard_by_latest_submission``),
    ``best`` its best (EvalAI's default), ``selected`` with one selection the one
    the team makes public (``is_restricted_to_select_one_submission``).
    """
    shown_columns = columns(contest)
    first = shown_columns[0]

    def splits_of(board: Contest) -> list[str | None]:
        return [PUBLIC, PRIVATE] if board.split is not None else [None]

    splits = sorted({s for board, _ in annotated for s in splits_of(board)}, key=[PUBLIC, PRIVATE, None].index)
    board_of = {name: (board, annotation) for board, annotation in annotated for name in board.board}
    phase_policy, split_policy, _ = final_policy(contest)
    phases, phase_splits = [], []
    for number, phase in enumerate(contest.phases, start=1):
        board, annotation = board_of.get(phase.name, (None, "")) if contest.by_phase else annotated[0]
        if board is None:
            continue  # a phase that does not open this track
        phase_splits += [(number, splits.index(split) + 1, split) for split in splits_of(board)]
        phases.append(
            {
                "id": number,
                "name": phase.name,
                "description": phase_page_name(phase.name, number),
                "codename": _codename(phase.name, number),
                "start_date": _date(phase.start),
                "end_date": _date(phase.end),
                "test_annotation_file": annotation,
                "is_public": True,
                "leaderboard_public": True,
                **({"max_submissions_per_day": contest.quota.per_day} if contest.quota.per_day is not None else {}),
                **({"max_submissions": contest.quota.total} if contest.quota.total is not None else {}),
                **phase_policy,
            }
        )
    return {
        "leaderboard": [
            {
                "id": 1,
                "schema": {
                    "labels": [c.key for c in shown_columns],
                    "default_order_by": first.key,
                    "metadata": {
                        c.key: {"sort_ascending": not c.higher_is_better, "description": c.help} for c in shown_columns
                    },
                },
            }
        ],
        "dataset_splits": [
            {"id": i, "name": f"{split or 'test'} split".capitalize(), "codename": CODENAMES[split]}
            for i, split in enumerate(splits, start=1)
        ],
        "challenge_phases": phases,
        "challenge_phase_splits": [
            {
                "challenge_phase_id": number,
                "leaderboard_id": 1,
                "dataset_split_id": i,
                "visibility": 1 if split == PRIVATE else 3,
                "leaderboard_decimal_precision": decimals(contest),
                "is_leaderboard_order_descending": first.higher_is_better,
                **split_policy,
            }
            for number, i, split in phase_splits
        ],
    }


def final_policy(contest: Contest) -> tuple[dict[str, bool], dict[str, bool], list[str]]:
    """The contest's final-submission policy as EvalAI's phase fields and phase-split fields, and what EvalAI cannot carry over.

    ``selected``: a team's submissions stay off the leaderboard until it makes
    them public (``is_submission_public: false``), and the leaderboard ranks the
    best public one; EvalAI can restrict a team to one public submission, not
    to two or more, so a larger ``max_selected`` is not enforced there (said in a note).
    """
    ranking = contest.ranking
    if ranking.final == "last":
        return {}, {"show_leaderboard_by_latest_submission": True}, []
    if ranking.final == "best":
        return {}, {"show_leaderboard_by_latest_submission": False}, []
    if ranking.max_selected in (None, 1):
        return {"is_submission_public": False, "is_restricted_to_select_one_submission": True}, {}, []
    note = (
        f'final = "selected" with max_selected = {ranking.max_selected}: EvalAI can restrict a team to one public submission only; '
        f"teams there make any number of submissions public and the leaderboard ranks the best of them (at most {ranking.max_selected} is not enforced)"
    )
    return {"is_submission_public": False}, {}, [note]


def phase_page_name(name: str, number: int) -> str:
    """The phase's description page in the challenge zip."""
    return f"templates/phase_{_codename(name, number)}.html"


def phase_page(contest: Contest, name: str) -> str:
    """A phase's description (EvalAI requires one per phase): when it runs, how it is scored; the organizers may rewrite it."""
    phase = next(p for p in contest.phases if p.name == name)
    split = (
        "the public split of the test set (the private split is shown to the hosts only)"
        if contest.split is not None
        else "the test set"
    )
    return (
        f"<p>Phase <b>{html.escape(phase.name)}</b> of {html.escape(contest.title)}: from {_date(phase.start)} to {_date(phase.end)} UTC.</p>\n"
        f"<p>Submissions are scored on {split} by podium {__version__}, as the official rules of {html.escape(get(contest.challenge).title)} say; "
        f"the same score on your machine: <code>{html.escape(local_command(contest))}</code>.</p>\n"
    )


def _codename(name: str, number: int) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or f"phase-{number}"


def _date(moment: datetime) -> str:
    """EvalAI's ``YYYY-MM-DD HH:MM:SS``, in UTC."""
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")


SCRIPT = '''"""The EvalAI evaluation script of contest {id}, written by podium {version}: podium scores (install it where the workers run)."""

from podium.publish.platforms.evalai import evaluate as _evaluate


def evaluate(test_annotation_file, user_submission_file, phase_codename, **kwargs):
    return _evaluate(test_annotation_file, user_submission_file, phase_codename, **kwargs)
'''


def write_kit(contest: Contest, folder: Path) -> tuple[list[str], list[str]]:
    """Write EvalAI's files for ``contest`` into ``folder``; return their names, and notes on what EvalAI cannot carry over.

    ``challenge_config.podium.yaml`` (merge it into challenge_config.yaml),
    ``templates/phase_*.html`` (each phase's description),
    ``annotations/<contest id>.tar.gz`` (every phase's test annotation file, one per board when phases name data: the
    reference folder) and ``evaluation_script/`` (zip it as EvalAI asks; its
    ``requirements.txt``, which EvalAI's worker installs, names this podium).
    """
    annotated = annotation_files(contest)
    header = f"# The scoring part of challenge_config.yaml for contest {contest.id}, written by podium {__version__}: merge it into yours.\n"
    references = [reference_of(board) for board, _ in annotated]  # first: a contest of programs is refused as such
    settings = config(contest, annotated)
    files = {
        "challenge_config.podium.yaml": header
        + yaml.safe_dump(settings, sort_keys=False, allow_unicode=True, width=120),
        "evaluation_script/__init__.py": "from .main import evaluate  # noqa: F401\n",
        "evaluation_script/main.py": SCRIPT.format(id=contest.id, version=__version__),
        "evaluation_script/requirements.txt": (
            f"# EvalAI's worker installs this before it imports the script. Where podium {__version__} is not on the workers' package\n"
            "# index, put the address of the wheel you built from this podium (python -m pip wheel --no-deps .) in its place.\n"
            f"podium=={__version__}\n"
        ),
        **{phase["description"]: phase_page(contest, phase["name"]) for phase in settings["challenge_phases"]},
    }
    (folder / "annotations").mkdir(parents=True, exist_ok=True)
    for reference, (_, annotation) in zip(references, annotated):
        reference.write_tar(folder / annotation)
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    return sorted([*(annotation for _, annotation in annotated), *files]), final_policy(contest)[2]
