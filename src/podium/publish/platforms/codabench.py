"""A Codabench scoring program: ``podium codabench`` (``python -m podium codabench`` where only a module can be run).

Codabench runs the scoring program in the competition's Docker image with the
reference data unpacked in ``/app/input/ref``, the participant's submission
unpacked in ``/app/input/res``, and ``/app/output`` to write into
(CodaLab Competitions, which reads ``scores.txt`` and version-1 bundles only, is not served;
https://docs.codabench.org/latest/Organizers/Benchmark_Creation/Competition-Bundle-Structure/,
"Scoring program"). The program writes into the output folder:

- ``scores.json``: ``{"key": number}``, one key per leaderboard column
  (``--keys``, in the bundle's ``metadata.yaml``), else every score. The keys
  must match the columns' ``key``; the values are numbers only (see
  :mod:`podium.publish.platforms.scores` for undefined scores).
- ``detailed_results.html``: the report of the shown split, which Codabench
  shows to the participant when the competition sets ``enable_detailed_results``
  (https://docs.codabench.org/latest/Organizers/Benchmark_Creation/Detailed-Results-and-Visualizations/).
  It draws no truth: the participant must not see test labels.

Codabench's worker writes its own ``metadata`` file into ``input/res``
beside the participant's files: it is not scored, and a submission zipped as
one folder is looked for inside that folder all the same.

Every problem goes to standard output, which the participant reads in the
submission's logs. A rejected submission writes no ``scores.json`` and exits
1, so Codabench marks it failed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

from podium.contest import Setup
from podium.core.result import SCORED, Result
from podium.publish.platforms.folders import CODABENCH_INPUT, CODABENCH_OUTPUT
from podium.publish.platforms.scores import check_keys, numbers_only, score_folder, shown

INPUT, OUTPUT = CODABENCH_INPUT, CODABENCH_OUTPUT
SCORES_FILE = "scores.json"
DETAILS_FILE = "detailed_results.html"
PLATFORM_FILES = frozenset(
    {"metadata"}
)  # the worker's record of the prediction step, written into input/res beside the participant's files


def score(
    input_dir: Path,
    output_dir: Path,
    setup: Setup,
    split: str,
    keys: Sequence[str] | None,
    workers: int,
    echo: Callable[[str], None],
) -> Result:
    """Score ``input_dir/res`` and write the output folder; ``echo`` takes each log line."""
    from podium.publish.report import (
        render_report,
    )  # a quarter of a second to import: not at every podium command's start

    if keys is not None:
        check_keys(setup.challenge, keys)
    result = score_folder(
        setup, input_dir / "res", "Codabench unpacks the submission in input/res", workers, echo, PLATFORM_FILES
    )
    part = shown(result, split)
    output_dir.mkdir(parents=True, exist_ok=True)
    (output_dir / DETAILS_FILE).write_text(render_report(part.document, "your submission"), encoding="utf-8")
    if result.status == SCORED:
        numbers, notes = numbers_only(setup.challenge, part.scores, keys)
        for note in notes:
            echo(note)
        (output_dir / SCORES_FILE).write_text(json.dumps(numbers, indent=2, allow_nan=False) + "\n", encoding="utf-8")
        echo(
            f"{SCORES_FILE} ({'whole test set' if part.split is None else part.split + ' split'}): {', '.join(numbers)}"
        )
    return result
