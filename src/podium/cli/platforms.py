"""The platform commands: ``codabench`` and ``grand-challenge`` (entry points run by the platforms), ``bundle``, and ``kit``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from podium._version import __version__
from podium.cli.commandline import guarded
from podium.core.errors import EXIT_REJECTED, EXIT_SCORED, PodiumError
from podium.core.labels import PRIVATE, PUBLIC, REJECTED
from podium.publish.platforms import folders

SPLIT_HELP = "The contest split written for the leaderboard: public (the default: nothing of the private units), or private (a final phase)."


def shared(command: Callable[..., Any]) -> Callable[..., Any]:
    """Options shared by ``codabench`` and ``grand-challenge``."""
    for option in reversed(
        [
            click.argument("challenge", required=False),
            click.option(
                "--set",
                "settings",
                multiple=True,
                metavar="KEY=VALUE",
                help="A challenge parameter; relative paths are inside the reference folder.",
            ),
            click.option(
                "--split", type=click.Choice([PUBLIC, PRIVATE]), default=PUBLIC, show_default=True, help=SPLIT_HELP
            ),
            click.option(
                "--workers", type=click.IntRange(min=1), default=None, help="Worker processes [default: all cores]."
            ),
        ]
    ):
        command = option(command)
    return command


@click.command("codabench")
@shared
@click.option(
    "--input",
    "input_dir",
    type=click.Path(path_type=Path),
    default=folders.CODABENCH_INPUT,
    show_default=True,
    help="Holds ref/ (the reference data) and res/ (the submission).",
)
@click.option(
    "--output",
    "output_dir",
    type=click.Path(path_type=Path),
    default=folders.CODABENCH_OUTPUT,
    show_default=True,
    help="Where scores.json and detailed_results.html go.",
)
@click.option(
    "--truth",
    metavar="NAME",
    default=None,
    help="The truth inside ref/ [default: ref/contest.toml's, else ref's only file, else ref/].",
)
@click.option(
    "--keys",
    default=None,
    metavar="KEY,KEY",
    help="The leaderboard's column keys, written to scores.json in this order [default: every score].",
)
@guarded
def codabench_command(
    challenge: str | None,
    settings: tuple[str, ...],
    split: str,
    workers: int | None,
    input_dir: Path,
    output_dir: Path,
    truth: str | None,
    keys: str | None,
) -> int:
    """Codabench scoring program: input/ref and input/res to scores.json and detailed_results.html."""
    from podium.publish.platforms import codabench
    from podium.publish.platforms.reference import locate
    from podium.scoring.engine import default_workers

    setup = locate(input_dir / "ref", challenge, truth, settings)
    key_list = [k for k in keys.split(",") if k] if keys else None
    result = codabench.score(input_dir, output_dir, setup, split, key_list, workers or default_workers(), click.echo)
    return EXIT_REJECTED if result.status == REJECTED else EXIT_SCORED


@click.command("grand-challenge")
@shared
@click.option(
    "--input",
    "input_dir",
    type=click.Path(path_type=Path),
    default=folders.GRAND_CHALLENGE_INPUT,
    show_default=True,
    help="The submission, extracted.",
)
@click.option(
    "--output",
    "output_dir",
    type=click.Path(path_type=Path),
    default=folders.GRAND_CHALLENGE_OUTPUT,
    show_default=True,
    help="Where metrics.json goes.",
)
@click.option(
    "--ground-truth",
    "reference",
    type=click.Path(path_type=Path),
    default=folders.GRAND_CHALLENGE_GROUND_TRUTH,
    show_default=True,
    help="The phase's ground truth: a reference folder (podium bundle reference).",
)
@click.option(
    "--truth",
    metavar="NAME",
    default=None,
    help="The truth inside the ground-truth folder [default: its contest.toml's, else its only file, else the folder].",
)
@guarded
def grand_challenge_command(
    challenge: str | None,
    settings: tuple[str, ...],
    split: str,
    workers: int | None,
    input_dir: Path,
    output_dir: Path,
    reference: Path,
    truth: str | None,
) -> int:
    """Grand Challenge evaluation: /input to /output/metrics.json (case and aggregates)."""
    from podium.publish.platforms import grand_challenge
    from podium.publish.platforms.reference import locate
    from podium.scoring.engine import default_workers

    setup = locate(reference, challenge, truth, settings)
    result = grand_challenge.score(input_dir, output_dir, setup, split, workers or default_workers(), click.echo)
    return EXIT_REJECTED if result.status == REJECTED else EXIT_SCORED


@click.group("bundle")
def bundle() -> None:
    """Write what a platform needs to host a contest (contest.toml)."""


contest_option = click.option(
    "--contest",
    "contest_path",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="The contest file.",
)
track_option = click.option(
    "--track", help="The contest's track a platform hosts (a [[track]]'s id) [default: the contest's only track]."
)


@bundle.command("codabench")
@contest_option
@track_option
@click.option(
    "-o", "--output", required=True, type=click.Path(dir_okay=False, path_type=Path), help="The bundle to write (.zip)."
)
@click.option(
    "--image",
    required=True,
    metavar="NAME",
    help="The scoring image Codabench pulls (build it with scoring_image/Dockerfile), e.g. ghcr.io/ORG/podium:"
    + __version__,
)
@guarded
def bundle_codabench(contest_path: Path, track: str | None, output: Path, image: str) -> int:
    """A Codabench competition bundle (competition.yaml version 2) to upload as it is."""
    from podium.contest import load
    from podium.publish import display
    from podium.publish.platforms.codabench_bundle import write_bundle

    names = write_bundle(load(contest_path).of_track(track), image, output)
    display.stdout.print(
        f"{display.escape(str(output))}: Codabench bundle, {len(names)} files (upload it under Benchmarks > Management > Upload)",
        soft_wrap=True,
    )
    return EXIT_SCORED


@bundle.command("evalai")
@contest_option
@track_option
@click.option(
    "-o", "--output", required=True, type=click.Path(file_okay=False, path_type=Path), help="The folder to write into."
)
@guarded
def bundle_evalai(contest_path: Path, track: str | None, output: Path) -> int:
    """EvalAI: the leaderboard part of challenge_config.yaml, the annotation file and the evaluation script."""
    from podium.contest import load
    from podium.publish import display
    from podium.publish.platforms.evalai import write_kit

    names, notes = write_kit(load(contest_path).of_track(track), output)
    for name in names:
        display.stdout.print(display.escape(str(output / name)), soft_wrap=True)
    for note in notes:
        display.stderr.print(f"[yellow]warning:[/yellow] {display.escape(note)}", soft_wrap=True)
    return EXIT_SCORED


@bundle.command("reference")
@contest_option
@track_option
@click.option(
    "--phase",
    default=None,
    help="When phases name their own data: the phase whose truth, split and parameters it holds (a Grand Challenge phase each).",
)
@click.option(
    "-o", "--output", required=True, type=click.Path(dir_okay=False, path_type=Path), help="The .tar.gz to write."
)
@guarded
def bundle_reference(contest_path: Path, track: str | None, phase: str | None, output: Path) -> int:
    """The contest's reference folder as a .tar.gz: a Grand Challenge phase's ground truth, an EvalAI annotation file."""
    from podium.contest import load
    from podium.publish import display
    from podium.publish.platforms.reference import reference_of

    output.parent.mkdir(parents=True, exist_ok=True)
    reference_of(load(contest_path).on(track, phase)).write_tar(output)
    display.stdout.print(
        f"{display.escape(str(output))}: reference folder of the contest (truth and contest.toml)", soft_wrap=True
    )
    return EXIT_SCORED


@click.group("kit")
def kit_group() -> None:
    """Starting kits: sample items with their truth, a baseline, and the command that scores it as the server does."""


@kit_group.command("build")
@click.argument("contest_path", metavar="CONTEST", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("output", metavar="OUT.zip", type=click.Path(dir_okay=False, path_type=Path))
@track_option
@guarded
def kit_build(contest_path: Path, output: Path, track: str | None) -> int:
    """Write the starting kit that the contest file's [kit] (or a track's [track.kit]) sets up, as a zip."""
    from podium.contest import load
    from podium.publish import display
    from podium.publish.kit import build_kit, command, kit_name, tried

    contest = load(contest_path).on(track)
    size = build_kit(contest, output)
    try:
        scores = tried(output, contest).scores
    except PodiumError:
        output.unlink(missing_ok=True)
        raise
    display.stdout.print(
        f"{display.escape(str(output))}: starting kit, {size:,} bytes; in its folder {kit_name(contest)}/, participants run:",
        soft_wrap=True,
    )
    display.stdout.print(f"  {display.escape(command(contest))}", soft_wrap=True)
    shown = ", ".join(f"{name}={value}" for name, value in scores.items())
    display.stdout.print(f"which scores the baseline: {display.escape(shown)}", soft_wrap=True)
    return EXIT_SCORED


COMMANDS = (codabench_command, grand_challenge_command, bundle, kit_group)
