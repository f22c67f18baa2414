"""What one submission costs besides its scoring: checking it, and the result documents the service stores.

On the sets of ``dask_scaling.py`` (GlaS, 200 images; ILSVRC Task 2, the kit's 50,000 images,
when ``../shared/data/ilsvrc2012`` is there), with a contest split of half the units, the truth
already read once: the seconds of ``validate`` (the checks the service runs at upload, in its
web process), the bytes of the full and the public result documents (both are stored, per unit
and in all), the seconds to write both, and the submission's bytes per unit. Best of 3 runs, wall
and CPU seconds.

    .venv/bin/python benchmarks/documents.py
"""

from __future__ import annotations

from pathlib import Path

from dask_scaling import Case, glas_case, ilsvrc_case
from timing import best_of, machine_header

from podium.accel.allocator import keep_large_blocks
from podium.challenges import get
from podium.core.parameters import resolve
from podium.scoring import engine

REPEATS = 3


def size(path: Path) -> int:
    return path.stat().st_size if path.is_file() else sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def main() -> None:
    keep_large_blocks()
    machine_header(REPEATS)
    print(
        f"{'set':<16}{'units':>8}{'validate s':>12}{'CPU s':>7}{'full B/unit':>13}{'public B/unit':>15}{'full MB':>9}{'public MB':>11}{'write s':>9}{'CPU s':>7}{'sub B/unit':>12}"
    )
    for case in (glas_case(1.0), ilsvrc_case(1.0)):
        if case is None:
            print("ilsvrc2012-loc  left out: no ../shared/data/ilsvrc2012")
            continue
        print(measure(case))


def measure(case: Case) -> str:
    """One set's row."""
    challenge = get(case.challenge)
    units = challenge.units(case.truth, resolve(challenge.parameters, case.settings))
    split_of = {unit: ("public" if k % 2 else "private") for k, unit in enumerate(units)}
    engine.evaluate(case.challenge, case.truth, case.submission, case.settings)  # the truth read once
    validate = best_of(
        REPEATS,
        lambda: engine.evaluate(case.challenge, case.truth, case.submission, case.settings, checks_only=True),
        what="validate",
    )
    result = engine.evaluate(case.challenge, case.truth, case.submission, case.settings, split_of=split_of)
    write = best_of(REPEATS, lambda: (result.to_json(), result.to_json(public=True)), what="writing")
    full, public = write.value
    n = len(units)
    return (
        f"{case.challenge:<16}{n:>8,}{validate.wall:>12.3f}{validate.cpu:>7.3f}{len(full) / n:>13.0f}{len(public) / n:>15.0f}{len(full) / 1e6:>9.2f}"
        f"{len(public) / 1e6:>11.2f}{write.wall:>9.3f}{write.cpu:>7.3f}{size(case.submission) / n:>12.0f}"
    )


if __name__ == "__main__":
    main()
