"""Phases with their own data and boards: a development phase on one truth, the final phase on another.

The contest is GlaS on its demo set: the development phase scores on the demo
truth (no split), the final phase on a second truth (every gland shifted, so
the same files score lower) split half public, half private. Each phase has
a board of its own; phases that score on the same data share one.
"""

from __future__ import annotations

import json
import tarfile
import zipfile
from pathlib import Path

import pytest
import yaml

from conftest import run
from podium.challenges import get
from podium.contest import ContestError, load
from podium.publish.platforms.columns import columns
from podium.publish.platforms.scores import numbers_only
from podium.service.client import packed
from podium.service.database import reading
from podium.service.rescore import rescore
from podium.service.tables import results
from podium.service.worker import Worker
from served import podium
from service_helpers import Clock, LiveServer, at, set_up, worse_copy
from test_pages_browser import _shot, browser  # noqa: F401 (a fixture)
from test_platforms import (  # noqa: F401 (a fixture)
    codabench_scores,
    evalai_rows,
    packed_three_ways,
    platform_check,
    platform_checks,
)
from test_service import drain

CONTEST = """id = "glas-phases"
title = "Gland segmentation, two phases"
challenge = "glas"

[[phase]]
name = "development"
start = 2026-03-01T00:00:00Z
end = 2026-04-01T00:00:00Z
submissions = "files"
truth = "demo/truth"

[[phase]]
name = "final"
start = 2026-04-01T00:00:01Z
end = 2026-05-01T00:00:00Z
submissions = "files"
truth = "final-truth"
[phase.split]
public = 0.5
seed = 7
"""
DEV, FINAL = at("2026-03-10T12:00:00Z"), at("2026-04-10T12:00:00Z")


@pytest.fixture(scope="module")
def contest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("phases")
    demo = get("glas").write_demo(folder / "demo")
    worse_copy(demo.truth, folder / "final-truth")
    path = folder / "contest.toml"
    path.write_text(CONTEST)
    return path


def _evaluated(contest: Path, phase: str) -> dict:
    """``podium evaluate --contest --phase``'s result document of the demo submission."""
    code, output = run(
        "evaluate",
        "--contest",
        str(contest),
        "--phase",
        phase,
        "--submission",
        str(contest.parent / "demo" / "submission"),
        "--workers",
        "1",
        "--json",
        "-",
    )
    assert code == 0, output
    return json.loads(output)


@pytest.fixture(scope="module")
def evaluated(contest: Path) -> dict[str, dict]:
    return {phase: _evaluated(contest, phase) for phase in ("development", "final")}


def test_each_phase_is_scored_on_its_own_truth_and_split(contest: Path, evaluated: dict[str, dict]) -> None:
    loaded = load(contest)
    assert loaded.phased() and [b.board for b in loaded.boards()] == [("development",), ("final",)]
    development, final = loaded.on(None, "development"), loaded.on(None, "final")
    assert development.truth == contest.parent / "demo" / "truth" and development.split is None
    assert final.truth == contest.parent / "final-truth" and final.split is not None
    assert final.split.stamp()["public_units"] == 3 and final.stamp()["phases"] == ["final"]
    with pytest.raises(
        ContestError, match=r"scores its phases on data of their own: name a phase \(development, final\)"
    ):
        loaded.on(None)
    with pytest.raises(ContestError, match=r"has no phase 'test' \(phases: development, final\)"):
        loaded.on(None, "test")
    dev, fin = evaluated["development"], evaluated["final"]
    assert dev["signature"]["contest"]["phases"] == ["development"] and "splits" not in dev
    assert fin["signature"]["contest"]["phases"] == ["final"] and fin["splits"]["public"]["units"] == 3
    assert dev["signature"]["truth"] != fin["signature"]["truth"]
    assert dev["scores"]["f1"] > fin["scores"]["f1"]  # the same files, scored lower on the shifted truth
    code, output = run(
        "evaluate", "--contest", str(contest), "--submission", str(contest.parent / "demo" / "submission")
    )
    assert code == 2 and "name a phase (development, final)" in output and "Traceback" not in output, output
    code, output = run("contest", "check", str(contest))
    assert code == 0 and "boards (a phase that names" in output and "final-truth, 6 units" in output, output


def test_phases_on_the_same_data_share_a_board(contest: Path, tmp_path: Path) -> None:
    text = CONTEST.replace('challenge = "glas"', 'challenge = "glas"\ntruth = "demo/truth"')
    warmup = '[[phase]]\nname = "warm-up"\nstart = 2026-02-01T00:00:00Z\nend = 2026-03-01T00:00:00Z\nsubmissions = "files"\n\n'
    shared = contest.parent / "shared.toml"
    shared.write_text(text.replace("[[phase]]", warmup + "[[phase]]", 1))
    loaded = load(shared)  # warm-up names no data and development names the contest's: one board for both
    assert [b.board for b in loaded.boards()] == [("warm-up", "development"), ("final",)]
    assert loaded.on(None, "warm-up") is loaded.on(None, "development")
    assert [b.board for b in loaded.shown_boards(FINAL)] == [("final",), ("warm-up", "development")]
    assert [b.board for b in loaded.shown_boards(at("2026-01-01T00:00:00Z"))] == [("warm-up", "development")]
    one = contest.parent / "one.toml"
    one.write_text(
        text.replace('truth = "final-truth"\n[phase.split]\npublic = 0.5\nseed = 7\n', "").replace(
            '"files"\ntruth = "demo/truth"', '"files"'
        )
    )
    unphased = load(one)  # no phase names data: one board over every phase, as before phases could
    assert not unphased.phased() and unphased.on(None, "final") is unphased and unphased.board == ()


def test_with_tracks_a_phase_names_a_truth_per_track(contest: Path) -> None:
    tracks = contest.parent / "tracks.toml"
    text = CONTEST.replace('truth = "final-truth"', 'truth = { a = "final-truth" }').replace(
        'truth = "demo/truth"\n', ""
    )
    tracks.write_text(
        text
        + '\n[[track]]\nid = "a"\ntitle = "A"\ntruth = "demo/truth"\n\n[[track]]\nid = "b"\ntitle = "B"\ntruth = "demo/truth"\n'
    )
    loaded = load(tracks)
    assert [b.board for b in loaded.of_track("a").boards()] == [("development",), ("final",)]
    assert loaded.on("a", "final").truth == contest.parent / "final-truth" and loaded.on("a", "final").track == "a"
    b = loaded.on("b", "final")  # the final phase names no truth for b: b's own, with the phase's split
    assert b.truth == contest.parent / "demo" / "truth" and b.split is not None and b.board == ("final",)
    assert loaded.on("b", "development").split is None
    summary = loaded.summary()
    assert [(x["track"], x["phases"]) for x in summary["boards"]] == [
        ("a", ["development"]),
        ("a", ["final"]),
        ("b", ["development"]),
        ("b", ["final"]),
    ]


# (old, new, the line reported: a text on it, the message fragment)
PHASE_ERRORS = [
    ('truth = "final-truth"', 'truth = "no-such"', 'truth = "no-such"', "phase[2].truth: no path 'no-such'"),
    ('truth = "final-truth"', 'truht = "final-truth"', "truht", "unknown key phase[2].truht; did you mean truth?"),
    (
        'truth = "final-truth"',
        'truth = "contest.toml"',
        'truth = "contest.toml"',
        "contest.toml is not a folder of label images",
    ),
    (
        'truth = "final-truth"',
        'truth = {test = "final-truth"}',
        "truth = {test",
        "phase final names a truth for 'test', not a track it opens (glas-phases)",
    ),
    ("seed = 7", 'seed = 7\n[phase.parameters]\nbinary = "maybe"', 'binary = "maybe"', "parameter binary = 'maybe'"),
    ("seed = 7", "seed = 7\n[phase.parameters]\nbinarry = 1", "binarry", "unknown parameter 'binarry'"),
    ("public = 0.5", "public = 1.5", "public = 1.5", "phase[2].split.public = 1.5: must be a fraction"),
    (
        'truth = "demo/truth"',
        "",
        "",
        "truth is missing: the path of the ground truth, relative to this file (or a truth in each [[phase]]; phase development names none)",
    ),
]


@pytest.mark.parametrize(("old", "new", "marker", "fragment"), PHASE_ERRORS, ids=[e[3][:40] for e in PHASE_ERRORS])
def test_a_bad_phase_data_key_is_named_with_its_line(
    contest: Path, tmp_path: Path, old: str, new: str, marker: str, fragment: str
) -> None:
    edited = contest.parent / f"{tmp_path.name}.toml"
    edited.write_text(CONTEST.replace(old, new, 1))
    code, output = run("contest", "check", str(edited))
    found = next((row for row in output.splitlines() if fragment in row), None)
    assert code == 2 and found is not None and "Traceback" not in output, output
    if marker:
        line = next(i for i, row in enumerate(edited.read_text().splitlines(), start=1) if marker in row)
        assert f"{edited.name}:{line}: " in found, output


def _row(board: dict, team: str) -> dict:
    return next(t for t in board["teams"] if t["team"] == team)


def test_each_phase_its_board_on_uvicorn_with_a_worker(
    contest: Path, evaluated: dict[str, dict], tmp_path: Path
) -> None:
    """A team submits the same files in each phase (the clock moved between): each board shows the score on its own data."""
    clock = Clock(DEV)
    service, token = set_up(
        f"sqlite:///{tmp_path / 'podium.sqlite3'}", contest, tmp_path / "data", ("alpha", "beta"), clock
    )
    worker = Worker(service.engine, service.data, clock=clock)
    sent = packed(contest.parent / "demo" / "submission", tmp_path).read_bytes()
    dev, final = evaluated["development"], evaluated["final"]
    public, private = final["splits"]["public"]["scores"], final["splits"]["private"]["scores"]
    assert public["f1"] != private["f1"] != dev["scores"]["f1"]  # three numbers a leak would show
    with LiveServer(service) as live:

        def upload(team: str) -> dict:
            taken = live.call("POST", "/api/submissions", token[team], body=sent, query={"filename": "t.tar.gz"})
            assert taken.status == 201 and drain(worker) == 1, taken.body
            return taken.body

        def board(**query: str) -> dict:
            answer = live.call("GET", "/api/leaderboard", query=query or None)
            assert answer.status == 200, answer.body
            return answer.body

        assert upload("alpha")["phase"] == "development"
        shown = board()
        assert shown["phases"] == ["development"] and _row(shown, "alpha")["scores"] == dev["scores"]

        clock.now = FINAL
        assert upload("alpha")["phase"] == "final"
        shown, earlier = board(), board(phase="development")
        assert shown["phases"] == ["final"] and not shown["revealed"] and _row(shown, "alpha")["scores"] == public
        assert _row(earlier, "alpha")["scores"] == dev["scores"] and _row(earlier, "beta")["status"] == "none"
        mine = live.call("GET", "/api/submissions", token["alpha"]).body
        assert [s["phase"] for s in mine] == ["final", "development"]
        assert set(mine[0]["result"]["splits"]) == {"public"} and mine[0]["result"]["scores"] == {}
        assert (
            mine[1]["result"]["signature"]["truth"] == dev["signature"]["truth"]
        )  # scored on the development truth only
        seen = json.dumps([board(), board(phase="development"), mine, live.call("GET", "/api/contest").body])
        assert (
            repr(private["f1"]) not in seen and repr(final["scores"]["f1"]) not in seen
        )  # nothing of the final truth's secret
        described = live.call("GET", "/api/contest").body
        assert [(b["phases"], b["units"]) for b in described["boards"]] == [(["development"], 6), (["final"], 6)]
        assert str(contest.parent) not in json.dumps(described)  # no server folder, a board's truth included
        unknown = live.call("GET", "/api/leaderboard", query={"phase": "test"})
        assert (
            unknown.status == 422
            and unknown.body["detail"] == "contest glas-phases has no phase 'test' (phases: development, final)"
        )

        # rescore: each submission scored again on its own phase's data
        assert rescore(service.engine)[1] == 2 and drain(worker) == 2
        with reading(service.engine) as connection:
            again = {
                r.submission_id: r.document for r in connection.execute(results.select().where(results.c.round == 2))
            }
        assert [again[s["id"]]["signature"]["truth"] for s in mine] == [
            final["signature"]["truth"],
            dev["signature"]["truth"],
        ]
        assert (
            _row(board(), "alpha")["scores"] == public
            and _row(board(phase="development"), "alpha")["scores"] == dev["scores"]
        )

        cli = podium("leaderboard", "--server", live.url, "--phase", "development", "--json")
        assert cli.returncode == 0 and _row(json.loads(cli.stdout), "alpha")["scores"] == dev["scores"], cli.stderr
        page = live.call("GET", "/").body
        assert page.index("phase final</a>") < page.index("phase development</a>") and "(closed)" in page

        clock.now = at("2026-05-02T00:00:00Z")  # the last phase over: every board revealed
        shown = board()
        assert shown["revealed"] and shown["phases"] == ["final"] and _row(shown, "alpha")["scores"] == private
        assert (
            board(phase="development")["revealed"]
            and _row(board(phase="development"), "alpha")["scores"] == dev["scores"]
        )


def test_the_boards_in_chromium(
    contest: Path,
    browser: object,  # noqa: F811 (the fixture)
    tmp_path: Path,
) -> None:
    """The contest page shows each phase's board, the current first; the board page moves between phases; axe-core passes each."""
    clock = Clock(DEV)
    service, token = set_up(f"sqlite:///{tmp_path / 'podium.sqlite3'}", contest, tmp_path / "data", ("alpha",), clock)
    worker = Worker(service.engine, service.data, clock=clock)
    sent = packed(contest.parent / "demo" / "submission", tmp_path).read_bytes()
    with LiveServer(service) as live:
        for now in (DEV, FINAL):
            clock.now = now
            live.call("POST", "/api/submissions", token["alpha"], body=sent, query={"filename": "t.tar.gz"})
            assert drain(worker) == 1
        page = browser.new_context(viewport={"width": 375, "height": 800}).new_page()  # type: ignore[attr-defined]
        page.goto(live.url + "/")
        headings = page.eval_on_selector_all("main h3", "hs => hs.map(h => h.innerText)")
        assert headings == ["phase final", "phase development (closed)"], headings
        _shot(page, "phase-boards-contest")
        page.click("text=phase development")
        page.wait_for_url("**/leaderboard?phase=development")
        assert "phase development" in page.inner_text("h1") and "alpha" in page.inner_text("#board")
        _shot(page, "phase-boards-development")
        page.click("nav[aria-label=Phases] >> text=final")
        page.wait_for_url("**/leaderboard?phase=final")
        assert "phase final" in page.inner_text("h1")
        _shot(page, "phase-boards-final")


def test_a_selection_counts_on_its_phases_board_and_freezes_when_the_board_closes(
    contest: Path, tmp_path: Path
) -> None:
    selected = contest.parent / "selected.toml"
    selected.write_text(CONTEST + '\n[ranking]\nfinal = "selected"\nmax_selected = 1\n')
    clock = Clock(DEV)
    service, token = set_up(f"sqlite:///{tmp_path / 'podium.sqlite3'}", selected, tmp_path / "data", ("alpha",), clock)
    worker = Worker(service.engine, service.data, clock=clock)
    sent = packed(contest.parent / "demo" / "submission", tmp_path).read_bytes()
    with LiveServer(service) as live:

        def choose(number: int, chosen: bool) -> dict:
            query = {"selected": "true" if chosen else "false"}
            return live.call("PUT", f"/api/submissions/{number}/selected", token["alpha"], query=query)

        ids = []
        for now in (DEV, FINAL):
            clock.now = now
            ids.append(
                live.call("POST", "/api/submissions", token["alpha"], body=sent, query={"filename": "t.tar.gz"}).body[
                    "id"
                ]
            )
            assert drain(worker) == 1
        clock.now = DEV
        assert choose(ids[0], True).status == 200  # the development board's one selection
        clock.now = FINAL
        assert choose(ids[1], True).status == 200  # the final board's: counted on its own board
        frozen = choose(ids[0], False)
        assert frozen.status == 409 and "froze when it closed at 2026-04-01T00:00:00+00:00" in frozen.body["detail"], (
            frozen.body
        )


def test_a_two_phase_codabench_bundle_is_taken_and_scored_by_codabench_on_each_phases_truth(
    contest: Path,
    evaluated: dict[str, dict],
    platform_checks: Path,  # noqa: F811 (the fixture)
    tmp_path: Path,
) -> None:
    """Codabench's own unpacker takes the bundle; its worker scores the development task on the development truth, the final ones on the final truth."""
    bundle = tmp_path / "bundle.zip"
    code, output = run(
        "bundle", "codabench", "--contest", str(contest), "-o", str(bundle), "--image", "ghcr.io/org/podium:1"
    )
    assert code == 0, output
    checked = platform_check(platform_checks, "check_codabench_bundle.py", bundle)
    assert checked.returncode == 0 and checked.stdout.startswith("OK "), checked.stdout + checked.stderr
    with zipfile.ZipFile(bundle) as archive:
        competition = yaml.safe_load(archive.read("competition.yaml"))
    assert [(p["name"], p["tasks"]) for p in competition["phases"]] == [
        ("development", [0]),
        ("final", [1]),
        ("final ranking (private split)", [2]),
    ]
    assert [t["reference_data"] for t in competition["tasks"]] == [
        "reference_data_1/",
        "reference_data_2/",
        "reference_data_2/",
    ]
    submission = packed_three_ways(contest.parent / "demo" / "submission", tmp_path / "packed")["files.zip"]
    keys = [c.key for c in columns(load(contest).on(None, "final"))]
    expected = [
        evaluated["development"]["scores"],
        evaluated["final"]["splits"]["public"]["scores"],
        evaluated["final"]["splits"]["private"]["scores"],
    ]
    for task, scores in enumerate(expected):
        got = codabench_scores(platform_checks, bundle, submission, task, tmp_path / f"out{task}", "--no-sandbox")
        assert got == numbers_only("glas", scores, keys)[0], task


def test_a_two_phase_evalai_kit_gives_each_phase_its_annotation_file(
    contest: Path,
    evaluated: dict[str, dict],
    platform_checks: Path,  # noqa: F811 (the fixture)
    tmp_path: Path,
) -> None:
    """EvalAI's config checker takes the kit; its worker scores each phase's annotation file as podium evaluate --phase does."""
    kit = tmp_path / "kit"
    code, output = run("bundle", "evalai", "--contest", str(contest), "-o", str(kit))
    assert code == 0, output
    checked = platform_check(platform_checks, "check_evalai_config.py", kit / "challenge_config.podium.yaml")
    assert checked.returncode == 0 and checked.stdout.strip().splitlines()[-1].startswith("OK "), checked.stdout
    config = yaml.safe_load((kit / "challenge_config.podium.yaml").read_text())
    files = {p["codename"]: p["test_annotation_file"] for p in config["challenge_phases"]}
    assert files == {"development": "annotations/glas-phases-1.tar.gz", "final": "annotations/glas-phases-2.tar.gz"}
    codename = {s["id"]: s["codename"] for s in config["dataset_splits"]}
    assert sorted(
        (s["challenge_phase_id"], codename[s["dataset_split_id"]]) for s in config["challenge_phase_splits"]
    ) == [
        (1, "test_split"),
        (2, "private_split"),
        (2, "public_split"),
    ]
    keys = [c.key for c in columns(load(contest).on(None, "final"))]
    submission = packed_three_ways(contest.parent / "demo" / "submission", tmp_path / "packed")["files.zip"]
    expected = {
        "development": {"test_split": evaluated["development"]["scores"]},
        "final": {f"{s}_split": evaluated["final"]["splits"][s]["scores"] for s in ("public", "private")},
    }
    for phase, annotation in files.items():
        rows, _ = evalai_rows(platform_checks, kit, submission, phase, kit / annotation)
        assert rows == {split: numbers_only("glas", scores, keys)[0] for split, scores in expected[phase].items()}, (
            phase
        )


def test_a_grand_challenge_ground_truth_is_one_phases(contest: Path, tmp_path: Path) -> None:
    code, output = run("bundle", "reference", "--contest", str(contest), "-o", str(tmp_path / "all.tar.gz"))
    assert code == 2 and "name a phase (development, final)" in output, output
    for phase, truth in (("development", "demo/truth"), ("final", "final-truth")):
        target = tmp_path / f"{phase}.tar.gz"
        code, output = run("bundle", "reference", "--contest", str(contest), "--phase", phase, "-o", str(target))
        with tarfile.open(target) as archive:
            written = archive.extractfile("contest.toml").read().decode()  # type: ignore[union-attr]
            held = {
                Path(n).name: archive.extractfile(n).read()  # type: ignore[union-attr]
                for n in archive.getnames()
                if n.startswith("truth/")
            }
        assert code == 0 and held == {p.name: p.read_bytes() for p in (contest.parent / truth).iterdir()}, output
        assert ("[split]" in written) == (phase == "final")


def test_an_anonymous_board_page_kept_from_before_a_phase_closed_says_it_closed(contest: Path, tmp_path: Path) -> None:
    """The page a visitor gets is kept per board (and shared by the web processes); which phases are shown and which
    closed is the clock's, not the board's: the development board's page, drawn while it was the only phase, named
    no final phase and no "(closed)" once the clock passed into the final phase with nothing else changed."""
    clock = Clock(DEV)
    service, _ = set_up(f"sqlite:///{tmp_path / 'podium.sqlite3'}", contest, tmp_path / "data", ("alpha",), clock)
    with LiveServer(service) as live:
        before = live.call("GET", "/leaderboard", query={"phase": "development"}).body
        assert "(closed)" not in before and "phase=final" not in before
        clock.now = FINAL  # no submission, no change of the database: the board's stamp is the same
        after = live.call("GET", "/leaderboard", query={"phase": "development"}).body
        assert "(closed)" in after and "phase=final" in after, after[:3000]
