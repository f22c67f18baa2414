"""The platforms' folders in their scoring containers: the platform commands' defaults, named here
(no NumPy, no contest reader) so that ``podium --help`` reads them without loading the scoring."""

from __future__ import annotations

from pathlib import Path

CODABENCH_INPUT = Path("/app/input")  # Codabench's folders in the scoring container
CODABENCH_OUTPUT = Path("/app/output")
GRAND_CHALLENGE_INPUT = Path("/input")  # Grand Challenge's folders in the evaluation container
GRAND_CHALLENGE_OUTPUT = Path("/output")
GRAND_CHALLENGE_GROUND_TRUTH = Path("/opt/ml/input/data/ground_truth")
