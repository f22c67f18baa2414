"""Tracks (``[[track]]``) and per-phase rules (``[phase.quota]``, ``tracks``): the contest file, the database, the service.

The contest is ``examples/contests/ilsvrc2012-tasks``: ILSVRC 2012's three
tasks on the demo sets the challenges write (as ``podium demo`` does), each a
track with its own board and quota; a development phase of 5 a day per track,
then a final phase of 1 a day that opens two of the three.
"""

from __future__ import annotations

import json
import shutil
import tarfile
import time
from pathlib import Path

import pytest
from sqlalchemy import column, insert, select, table

from browser_wait import wait_until
from conftest import run
from podium.challenges import get
from podium.contest import ContestError, load
from podium.core.result import PUBLIC
from podium.publish.platforms.columns import columns
from podium.publish.platforms.scores import numbers_only
from podium.scoring.engine import evaluate
from podium.service import accounts
from podium.service.client import Answer, packed
from podium.service.database import connect, migrate, reading, writing
from podium.service.tables import results, submissions
from podium.service.worker import Worker
from served import Serve, podium
from service_helpers import Clock, LiveServer, at, set_up
from test_pages_browser import Scorer, _logged_in, browser  # noqa: F401 (a fixture)
from test_platforms import codabench_scores, packed_three_ways, platform_check, platform_checks  # noqa: F401 (a fixture)
from test_service import drain

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "contests" / "ilsvrc2012-tasks" / "contest.toml"
TASKS = {"cls": "ilsvrc2012-cls", "loc": "ilsvrc2012-loc", "fine": "ilsvrc2012-fine"}


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example contest beside ``demo-data/`` holding the three tasks' demo sets, as ``make demo`` leaves a checkout; its path."""
    root = tmp_path_factory.mktemp("checkout")
    for challenge in TASKS.values():
        get(challenge).write_demo(root / "demo-data" / challenge)
    contest = root / "examples" / "contests" / "ilsvrc2012-tasks" / "contest.toml"
    contest.parent.mkdir(parents=True)
    shutil.copyfile(EXAMPLE, contest)
    return contest


def _edited(contest: Path, folder: Path, old: str, new: str) -> Path:
    """A copy of the example with ``old`` replaced, in ``folder`` beside the example (its relative paths still hold)."""
    text = contest.read_text()
    assert old in text, old
    edited = contest.parent / folder.name / "contest.toml"
    edited.parent.mkdir(exist_ok=True)
    edited.write_text(text.replace(old, new, 1).replace("../../../demo-data", "../../../../demo-data"))
    return edited


def test_the_example_is_three_tracks_each_scored_on_its_own(checkout: Path) -> None:
    contest = load(checkout)
    assert contest.track_ids() == ["cls", "loc", "fine"] and contest.default_track() is None
    assert [(t.track, t.challenge, t.units) for t in contest.tracks] == [
        ("cls", "ilsvrc2012-cls", 2000),
        ("loc", "ilsvrc2012-loc", 1000),
        ("fine", "ilsvrc2012-fine", 600),
    ]
    fine = contest.on("fine")
    assert fine.split is not None and fine.split.stamp()["public_units"] == 120 and fine.stamp()["track"] == "fine"
    assert contest.on("loc").settings.keys() == {"boxes", "meta"} and contest.on("cls").settings == {}
    assert [p.quota.per_day if p.quota else None for p in contest.phases] == [5, 1] and contest.phases[1].tracks == [
        "cls",
        "loc",
    ]
    code, output = run("contest", "check", str(checkout))
    assert (
        code == 0
        and "3 tracks, valid" in output
        and "track fine: Task 3: fine-grained classification (ilsvrc2012-fine)" in output
    ), output
    assert "final (files, for cls, loc)" in output and "its quota: per_day=1" in output, output
    with pytest.raises(ContestError, match=r"no track 'det' \(tracks: cls, loc, fine\)"):
        contest.on("det")
    with pytest.raises(ContestError, match=r"has 3 tracks: name one \(cls, loc, fine\)"):
        contest.on(None)


def test_podium_evaluate_scores_the_track_named(checkout: Path) -> None:
    submission = checkout.parents[3] / "demo-data" / "ilsvrc2012-fine" / "submission"
    code, output = run("evaluate", "--contest", str(checkout), "--submission", str(submission), "--workers", "1")
    assert code == 2 and "contest ilsvrc2012 has 3 tracks: name one (cls, loc, fine)" in output, output
    code, output = run(
        "evaluate",
        "--contest",
        str(checkout),
        "--track",
        "fine",
        "--submission",
        str(submission),
        "--workers",
        "1",
        "--json",
        "-",
    )
    document = json.loads(output)
    assert (
        code == 0 and document["challenge"] == "ilsvrc2012-fine" and document["signature"]["contest"]["track"] == "fine"
    )
    assert document["splits"]["public"]["units"] == 120, document["splits"]["public"]


def test_a_platforms_bundle_and_podium_rank_take_one_track(checkout: Path, tmp_path: Path) -> None:
    code, output = run("bundle", "reference", "--contest", str(checkout), "-o", str(tmp_path / "ref.tar.gz"))
    assert (
        code == 2 and "has 3 tracks: name one (cls, loc, fine)" in output and not (tmp_path / "ref.tar.gz").exists()
    ), output
    code, output = run(
        "bundle", "reference", "--contest", str(checkout), "--track", "loc", "-o", str(tmp_path / "ref.tar.gz")
    )
    with tarfile.open(tmp_path / "ref.tar.gz") as archive:
        written = archive.extractfile("contest.toml").read().decode()  # type: ignore[union-attr]
    assert code == 0 and 'challenge = "ilsvrc2012-loc"' in written, output
    submission = checkout.parents[3] / "demo-data" / "ilsvrc2012-cls" / "submission"
    code, output = run(
        "evaluate",
        "--contest",
        str(checkout),
        "--track",
        "cls",
        "--submission",
        str(submission),
        "--workers",
        "1",
        "--json",
        str(tmp_path / "a.json"),
    )
    assert code == 0, output
    code, output = run("rank", "--contest", str(checkout), str(tmp_path / "a.json"), "--json", "-")
    assert code == 2 and "name one (cls, loc, fine)" in output, output
    code, output = run("rank", "--contest", str(checkout), "--track", "cls", str(tmp_path / "a.json"), "--json", "-")
    assert code == 0 and json.loads(output)["teams"][0]["status"] == "scored", output


def test_a_tracks_codabench_bundle_is_taken_and_scored_by_codabench_as_podium_does(
    checkout: Path,
    platform_checks: Path,  # noqa: F811 (the fixture)
    tmp_path: Path,
) -> None:
    """Codabench's own unpacker takes the bundle of track fine, and its worker's public scores are ``podium evaluate --track fine``'s."""
    bundle = tmp_path / "bundle.zip"
    code, output = run(
        "bundle",
        "codabench",
        "--contest",
        str(checkout),
        "--track",
        "fine",
        "-o",
        str(bundle),
        "--image",
        "ghcr.io/org/podium:1",
    )
    assert code == 0, output
    checked = platform_check(platform_checks, "check_codabench_bundle.py", bundle)
    assert checked.returncode == 0 and checked.stdout.startswith("OK "), checked.stdout + checked.stderr
    fine = load(checkout).on("fine")
    submission = packed_three_ways(
        checkout.parents[3] / "demo-data" / "ilsvrc2012-fine" / "submission", tmp_path / "packed"
    )["files.zip"]
    expected = evaluate(fine.challenge, fine.truth, submission, fine.settings, **fine.evaluation())
    scores = codabench_scores(platform_checks, bundle, submission, 0, tmp_path / "out", "--no-sandbox")
    assert scores == numbers_only(fine.challenge, expected.splits[PUBLIC].scores, [c.key for c in columns(fine)])[0]


def test_a_contest_without_tracks_is_one_track_named_as_the_contest(tmp_path: Path) -> None:
    from service_helpers import write_contest

    contest = load(write_contest(tmp_path / "contest"))
    assert (
        contest.tracks == ()
        and contest.track_ids() == ["test-glas"]
        and contest.on(None) is contest
        and contest.on("test-glas") is contest
    )
    assert "track" not in contest.stamp() and "tracks" not in contest.summary()


# (old, new, the line reported: a text on it, the message fragment)
TRACK_ERRORS = [
    (
        'challenge = "ilsvrc2012-loc"',
        'challange = "ilsvrc2012-loc"',
        "challange",
        "unknown key track[2].challange; did you mean challenge?",
    ),
    ('id = "loc"', 'id = "cls"', 'id = "cls"#2', "track id 'cls' is also an earlier track's"),
    ('id = "loc"', 'id = "l o c"', 'id = "l o c"', "track[2].id = 'l o c': must be an id"),
    ('truth = "../../../demo-data/ilsvrc2012-fine/truth.txt"\n', "", "[[track]]#3", "track fine: truth is missing"),
    (
        'meta = "../../../demo-data/ilsvrc2012-loc/meta.mat"',
        'meta = "../../../demo-data/ilsvrc2012-loc/meta.txt"',
        "meta.txt",
        "parameter meta = ",
    ),
    (
        "public = 0.2",
        "public = 2.0",
        "public = 2.0",
        "track[3].split.public = 2.0: must be a fraction strictly between 0 and 1",
    ),
    (
        'tracks = ["cls", "loc"]',
        'tracks = ["cls", "det"]',
        'tracks = ["cls", "det"]',
        "phase final opens det, not a track of this contest (tracks: cls, loc, fine)",
    ),
    (
        "[phase.quota]\nper_day = 1",
        "[phase.quota]\nper_day = 0",
        "per_day = 0",
        "phase[2].quota.per_day = 0: must be a positive integer",
    ),
    ("[phase.quota]\nper_day = 1", "[phase.quota]\nper_hour = 1", "per_hour", "unknown key phase[2].quota.per_hour"),
]


@pytest.mark.parametrize(("old", "new", "marker", "fragment"), TRACK_ERRORS, ids=[e[3][:40] for e in TRACK_ERRORS])
def test_a_bad_track_or_phase_key_is_named_with_its_line(
    checkout: Path, tmp_path: Path, old: str, new: str, marker: str, fragment: str
) -> None:
    edited = _edited(checkout, tmp_path, old, new)
    code, output = run("contest", "check", str(edited))
    text, (marker, _, nth) = edited.read_text(), marker.partition("#")
    line = [i for i, row in enumerate(text.splitlines(), start=1) if marker in row][int(nth or 1) - 1]
    assert code == 2 and f"contest.toml:{line}: " in next(row for row in output.splitlines() if fragment in row), output


def test_a_contest_must_say_what_it_scores_at_the_top_or_in_each_track(checkout: Path, tmp_path: Path) -> None:
    text = checkout.read_text()
    bare = text[: text.index("[[track]]")]  # no track, no challenge
    edited = checkout.parent / tmp_path.name / "contest.toml"
    edited.parent.mkdir(exist_ok=True)
    edited.write_text(bare)
    code, output = run("contest", "check", str(edited))
    assert code == 2 and "challenge is missing: one of" in output and "truth is missing" in output, output
    top = bare.replace(
        'timezone = "UTC"',
        'timezone = "UTC"\nchallenge = "ilsvrc2012-cls"\ntruth = "../../../../demo-data/ilsvrc2012-cls/ground_truth.txt"',
    )
    tracks = '[[track]]\nid = "cls"\ntitle = "Task 1"\n\n[[track]]\nid = "fine"\ntitle = "Task 3"\nchallenge = "ilsvrc2012-fine"\ntruth = "../../../../demo-data/ilsvrc2012-fine/truth.txt"\n'
    edited.write_text(top.replace('tracks = ["cls", "loc"]', 'tracks = ["cls"]') + tracks)
    contest = load(edited)  # the first track takes the contest's challenge and truth, the second sets its own
    assert [(t.track, t.challenge, t.units) for t in contest.tracks] == [
        ("cls", "ilsvrc2012-cls", 2000),
        ("fine", "ilsvrc2012-fine", 600),
    ]


def test_the_upgrade_gives_every_submission_the_contests_one_track(database_url: str) -> None:
    """A database at revision 0002 with a contest's rows in it (a team, a scored submission, its result) migrated to head."""
    engine = connect(database_url)
    migrate(engine, "0002")
    now = at("2026-03-02T10:00:00Z")
    row = {
        "team_id": 1,
        "phase": "first",
        "kind": "files",
        "filename": "a.zip",
        "size": 3,
        "sha256": "0" * 64,
        "target": "files",
        "created": now,
        "status": "scored",
        "selected": False,
    }
    with writing(engine) as connection:
        # the tables as revision 0002 had them (settings and teams gained a contest in 0006)
        connection.execute(
            insert(table("settings", column("key"), column("value"))).values(key="contest_id", value="glas-2015")
        )
        connection.execute(
            insert(table("teams", column("id"), column("name"), column("created"))).values(
                id=1, name="alpha", created=now
            )
        )
        for number in (1, 2):
            connection.execute(insert(submissions).values(id=number, **row))  # the 0002 columns only: no track yet
            connection.execute(
                insert(results).values(
                    submission_id=number,
                    round=1,
                    status="scored",
                    public_scores={"f1": 0.5},
                    private_scores={"f1": 0.4},
                    document={},
                    public_document={},
                    created=now,
                )
            )
    migrate(engine)
    with reading(engine) as connection:
        assert connection.execute(select(submissions.c.id, submissions.c.track).order_by(submissions.c.id)).all() == [
            (1, "glas-2015"),
            (2, "glas-2015"),
        ]
        assert connection.execute(select(results.c.submission_id, results.c.public_scores)).all() == [
            (1, {"f1": 0.5}),
            (2, {"f1": 0.5}),
        ]
    engine.dispose()


def test_each_track_its_board_and_quota_and_each_phase_its_rules(checkout: Path, tmp_path: Path) -> None:
    clock = Clock(at("2026-03-02T10:00:00Z"))  # the development phase: 5 a day on each track
    service, token = set_up(
        f"sqlite:///{tmp_path / 'podium.sqlite3'}", checkout, tmp_path / "data", ("alpha", "beta"), clock
    )
    worker = Worker(service.engine, service.data, clock=clock)
    demo = checkout.parents[3] / "demo-data"
    sent = {track: packed(demo / challenge / "submission", tmp_path).read_bytes() for track, challenge in TASKS.items()}

    def upload(team: str, track: str | None) -> Answer:
        return live.call(
            "POST",
            "/api/submissions",
            token[team],
            body=sent.get(track or "cls", sent["cls"]),
            query={"filename": "team.tar.gz"} | ({"track": track} if track else {}),
        )

    with LiveServer(service) as live:
        unnamed = upload("alpha", None)
        assert (
            unnamed.status == 422
            and unnamed.body["detail"] == "contest ilsvrc2012 has 3 tracks: name one (cls, loc, fine)"
        ), unnamed.body
        unknown = upload("alpha", "det")
        assert (
            unknown.status == 422
            and unknown.body["detail"] == "contest ilsvrc2012 has no track 'det' (tracks: cls, loc, fine)"
        ), unknown.body

        # the phase's own quota: the 5th upload of the day to cls taken, the 6th refused; loc counts its own
        for _ in range(5):  # each scored before the next is sent: the contest allows 2 at once
            taken = upload("alpha", "cls")
            assert taken.status == 201 and taken.body["track"] == "cls" and drain(worker) == 1, taken.body
        sixth = upload("alpha", "cls")
        assert sixth.status == 429 and sixth.body["detail"].startswith(
            "the daily quota of phase development of 5 is used"
        ), sixth.body
        assert upload("alpha", "loc").status == 201 and upload("beta", "cls").status == 201 and drain(worker) == 2
        assert [live.call("GET", "/api/quota", token["alpha"], query={"track": t}).body["today"] for t in TASKS] == [
            5,
            1,
            0,
        ]

        # each board ranks its own track's submissions, scored by the track's challenge
        cls, loc, fine = (live.call("GET", "/api/leaderboard", query={"track": t}).body for t in TASKS)
        assert (cls["track"], cls["challenge"], loc["track"], loc["challenge"]) == (
            "cls",
            "ilsvrc2012-cls",
            "loc",
            "ilsvrc2012-loc",
        )
        assert {t["team"]: t["status"] for t in cls["teams"]} == {
            "alpha": "scored",
            "beta": "scored",
        } and "top5_error" in cls["teams"][0]["scores"]
        assert {t["team"]: t["status"] for t in loc["teams"]} == {
            "alpha": "scored",
            "beta": "none",
        } and "loc_error" in loc["teams"][0]["scores"]
        assert {t["status"] for t in fine["teams"]} == {"none"}
        mine = live.call("GET", "/api/submissions", token["alpha"]).body
        assert sorted(s["track"] for s in mine) == ["cls"] * 5 + ["loc"] and {s["status"] for s in mine} == {"scored"}
        assert (
            "Task 2: classification with localization" in live.call("GET", "/leaderboard", query={"track": "loc"}).body
        )
        page = live.call("GET", "/").body
        assert all(f"?track={t}" in page for t in TASKS) and "for cls, loc" in page
        assert (
            "(120 public, 480 private)" in page and "<h2>Rules</h2>" not in page
        )  # each track's rules, none the first's as the contest's

        # the final phase opens cls and loc only, at 1 a day
        clock.now = at("2030-01-02T10:00:00Z")
        closed = upload("alpha", "fine")
        assert (
            closed.status == 409
            and closed.body["detail"] == "phase final does not take submissions for track fine; it opens cls, loc"
        ), closed.body
        assert upload("alpha", "cls").status == 201 and drain(worker) == 1
        second = upload("alpha", "cls")
        assert second.status == 429 and "daily quota of phase final of 1 is used" in second.body["detail"], second.body
        assert upload("alpha", "loc").status == 201


def test_a_selection_counts_on_its_own_track(checkout: Path, tmp_path: Path) -> None:
    edited = _edited(checkout, tmp_path, 'final = "best"', 'final = "selected"\nmax_selected = 1')
    clock = Clock(at("2026-03-02T10:00:00Z"))
    service, token = set_up(f"sqlite:///{tmp_path / 'podium.sqlite3'}", edited, tmp_path / "data", ("alpha",), clock)
    worker = Worker(service.engine, service.data, clock=clock)
    demo = checkout.parents[3] / "demo-data"
    with LiveServer(service) as live:
        ids = []
        for track in ("cls", "loc", "cls"):
            sent = packed(demo / TASKS[track] / "submission", tmp_path).read_bytes()
            ids.append(
                live.call(
                    "POST",
                    "/api/submissions",
                    token["alpha"],
                    body=sent,
                    query={"filename": "t.tar.gz", "track": track},
                ).body["id"]
            )
            assert drain(worker) == 1
        select = lambda number: live.call(
            "PUT", f"/api/submissions/{number}/selected", token["alpha"], query={"selected": "true"}
        )
        assert select(ids[0]).status == 200 and select(ids[1]).status == 200  # one on cls, one on loc
        refused = select(ids[2])
        assert refused.status == 409 and "1 submissions are selected" in refused.body["detail"], refused.body


def test_a_team_submits_to_two_tracks_through_podium_serve_and_its_worker(checkout: Path, tmp_path: Path) -> None:
    """Real uvicorn, a real worker process and ``podium submit --track``: each board shows its own score, quotas are counted per track."""
    data = tmp_path / "data"
    data.mkdir()
    service, token = set_up(
        f"sqlite:///{data / 'podium.sqlite3'}", checkout, data, ("alpha",), Clock(at("2026-03-02T10:00:00Z"))
    )
    service.engine.dispose()
    demo = checkout.parents[3] / "demo-data"
    with Serve(checkout, data, None, "--team", "alpha") as server:
        assert "--track cls|loc|fine PATH" in server.output(), (
            server.output()
        )  # the team's command in the banner names the tracks
        for track, challenge in (("cls", "ilsvrc2012-cls"), ("loc", "ilsvrc2012-loc")):
            sent = podium(
                "submit",
                "--server",
                server.url,
                "--token",
                token["alpha"],
                "--track",
                track,
                "--wait",
                "60",
                str(demo / challenge / "submission"),
            )
            assert sent.returncode == 0 and "scored" in sent.stdout, sent.stdout + sent.stderr
        unknown = podium(
            "submit",
            "--server",
            server.url,
            "--token",
            token["alpha"],
            "--track",
            "det",
            str(demo / "ilsvrc2012-cls" / "submission"),
        )
        assert (
            unknown.returncode == 2
            and "no track 'det' (tracks: cls, loc, fine)" in unknown.stderr
            and "Traceback" not in unknown.stderr
        ), unknown
        boards = {t: podium("leaderboard", "--server", server.url, "--track", t, "--json") for t in TASKS}
        scores = {t: json.loads(b.stdout)["teams"][0]["scores"] for t, b in boards.items()}
        assert (
            set(scores["cls"]) >= {"top5_error", "top1_error"}
            and set(scores["loc"]) >= {"loc_error"}
            and scores["fine"] == {}
        )
        assert [server.call("GET", "/api/quota", token["alpha"], query={"track": t}).body["today"] for t in TASKS] == [
            1,
            1,
            0,
        ]


def test_the_docs_show_the_example_as_it_is() -> None:
    assert EXAMPLE.read_text() in (Path(__file__).resolve().parents[1] / "docs" / "contests.md").read_text()


def test_the_upload_page_sends_to_the_track_chosen_with_and_without_javascript(
    checkout: Path,
    browser: object,  # noqa: F811 (the fixture)
    tmp_path: Path,
) -> None:
    clock = Clock(at("2026-03-02T10:00:00Z"))
    service, token = set_up(f"sqlite:///{tmp_path / 'podium.sqlite3'}", checkout, tmp_path / "data", ("alpha",), clock)
    with writing(service.engine) as connection:
        accounts.add_user(connection, "ann", "ann-password-1", 1, False, clock())
    files = {}
    for track, challenge in TASKS.items():
        (tmp_path / track).mkdir()
        files[track] = packed(checkout.parents[3] / "demo-data" / challenge / "submission", tmp_path / track)
    with LiveServer(service) as live, Scorer(Worker(service.engine, service.data, clock=clock)):
        page = _logged_in(browser, live.url, "ann", "/submissions")
        assert page.eval_on_selector_all("#track option", "os => os.map(o => o.value)") == ["cls", "loc", "fine"]  # type: ignore[attr-defined]
        page.select_option("#track", "loc")  # type: ignore[attr-defined]
        page.set_input_files("#file", str(files["loc"]))  # type: ignore[attr-defined]
        page.click("#upload button")  # type: ignore[attr-defined]
        wait_until(page, "document.getElementById('upload-result').className === 'done'", timeout=20_000)
        plain = browser.new_context(java_script_enabled=False).new_page()  # type: ignore[attr-defined]
        plain.context.add_cookies(page.context.cookies())  # type: ignore[attr-defined]
        plain.goto(live.url + "/submissions?track=fine")
        assert plain.eval_on_selector("#track", "s => s.value") == "fine" and "Quota on track fine" in plain.inner_text(
            "main"
        )
        plain.set_input_files("#file", str(files["fine"]))
        plain.click("#upload button")
        plain.wait_for_url("**/submissions?sent=*&track=fine")
        for _ in range(600):  # bounded: 60 s for the worker
            mine = live.call("GET", "/api/submissions", token["alpha"]).body
            if {s["status"] for s in mine} == {"scored"}:
                break
            time.sleep(0.1)
        assert sorted((s["track"], s["status"]) for s in mine) == [("fine", "scored"), ("loc", "scored")], mine
        board = page.context.new_page()  # type: ignore[attr-defined]
        board.goto(live.url + "/leaderboard?track=loc")
        assert "Task 2: classification with localization" in board.inner_text("h1") and "alpha" in board.inner_text(
            "#board"
        )
