"""A Grand Challenge evaluation: ``podium grand-challenge`` (the default command of podium's image).

Grand Challenge runs the phase's evaluation container on each submission with
the submission extracted in ``/input`` and expects the metrics in
``/output/metrics.json``; when they cannot be computed, the container writes to
standard error and the last line is shown to the participant (evalutils, the
platform's evaluation kit: https://comic.github.io/evalutils/). The phase's
ground truth, uploaded as a ".tar.gz file of the ground truth that will be
extracted to /opt/ml/input/data/ground_truth/" (the phase form of
github.com/comic/grand-challenge.org), is read there; ``podium bundle
reference`` writes one, with the contest file in it. ``/input`` is read-only
and ``/tmp`` writable, where an archive is unpacked.

``metrics.json`` holds ``{"case": {item: {name: number}}, "aggregates": {score:
number}, "podium": {...}}``: one case per image or photo (see
:func:`~podium.publish.platforms.scores.cases`), the shown split's scores as numbers,
and podium's status, split and signature, so that results stay comparable.
This serves submissions of prediction files; a phase that runs algorithms
(``/input/predictions.json`` listing algorithm jobs) is not served.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

from podium._version import __version__
from podium.contest import Setup
from podium.core.result import SCORED, Result
from podium.publish.platforms.folders import GRAND_CHALLENGE_GROUND_TRUTH, GRAND_CHALLENGE_INPUT, GRAND_CHALLENGE_OUTPUT
from podium.publish.platforms.scores import cases, numbers_only, score_folder, shown

INPUT, OUTPUT, GROUND_TRUTH = GRAND_CHALLENGE_INPUT, GRAND_CHALLENGE_OUTPUT, GRAND_CHALLENGE_GROUND_TRUTH
METRICS_FILE = "metrics.json"
PLATFORM_FILES = frozenset(
    {"inputs.json"}
)  # Grand Challenge's description of the inputs, beside the submission in /input


def score(
    input_dir: Path, output_dir: Path, setup: Setup, split: str, workers: int, echo: Callable[[str], None]
) -> Result:
    """Score ``input_dir`` and write ``metrics.json``; problems go to ``echo`` and, last, a summary to standard error."""
    lines: list[str] = []

    def logged(line: str) -> None:
        lines.append(line)
        echo(line)

    result = score_folder(
        setup, input_dir, "Grand Challenge extracts the submission in /input", workers, logged, PLATFORM_FILES
    )
    if result.status != SCORED:
        first = next(
            (line.removeprefix("error ") for line in lines if line.startswith("error ")), "not scored"
        )  # its file named inside the submission
        print(
            f"rejected: {len(result.errors)} problem(s), the first: {first}", file=sys.stderr
        )  # the line the participant sees
        return result
    part = shown(result, split)
    aggregates, notes = numbers_only(setup.challenge, part.scores)
    for note in notes:
        echo(note)
    per_case = cases(part)
    metrics = {
        "case": per_case,
        "aggregates": aggregates,
        "podium": {
            "version": __version__,
            "status": result.status,
            "split": part.split,
            "signature": part.document["signature"],
        },
    }
    output_dir.mkdir(parents=True, exist_ok=True)
    (output_dir / METRICS_FILE).write_text(json.dumps(metrics, indent=2, allow_nan=False) + "\n", encoding="utf-8")
    echo(f"{METRICS_FILE}: {len(per_case)} cases; aggregates {', '.join(aggregates)}")
    return result
