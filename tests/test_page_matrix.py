"""Every page and API route of a served contest, for every contest shape, role and moment (issue 35).

Shapes: the example contests (``examples/contests/*``, on the demo data podium
writes, or on ``../shared`` data when they name it) and a generated matrix:
every challenge with files, each with every file parameter its demo uses
(ILSVRC task 2's ``boxes`` and ``meta``, task 1 with ``meta``); GlaS with and
without a split, with and without ``parts`` (and a part with no public
image); programs; a contest of three tracks (``ilsvrc2012-tasks``, with sign-up
and a terms page), whose teams send to its second track. Roles: anonymous, the two teams, the organizer. Moments:
before any submission, after scored and rejected ones, between the two
phases, after the reveal (the last phase ended), after a rescore.

At each moment every route answers what it should over real HTTP (uvicorn):
200, a redirect to the log-in page, or an HTML 403/404 page with the site's
navigation for pages and JSON for the API; never a 500; a team never sees
another team's submission, nor a private score before the reveal. The account
pages (``/register``, ``/terms``, ``/account``, ``/reset``) are among the routes.
Once per shape the pages are walked in real Chromium (desktop and 375 px phone)
with axe-core's check and a screenshot of each (``test-artifacts/pages/matrix/``, or ``$PODIUM_ARTIFACTS``),
and the served scores of each scored submission equal ``podium evaluate
--contest``'s. One server per shape, shared by its moments; the worker scores
inline, between moments.
"""

from __future__ import annotations

import json
import re
import shutil
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from click.testing import CliRunner

from accessibility import assert_accessible
from browser_wait import wait_until
from conftest import require
from podium.challenges import get
from podium.cli import cli
from podium.contest import load
from podium.service import accounts
from podium.service.client import packed, submit
from podium.service.database import writing
from podium.service.pages import COOKIE
from podium.service.rescore import rescore
from podium.service.titles import title
from podium.service.worker import Worker
from podium.synthetic.ilsvrc2012 import write_meta
from service_helpers import Clock, LiveServer, set_up
from test_pages_browser import ARTIFACTS, launch
from test_pages_browser import _problem as chromium_problem

ROOT = Path(__file__).parent.parent
EXAMPLES = ROOT / "examples" / "contests"
SHARED = ROOT.parent / "shared"
SHOTS = ARTIFACTS / "matrix"
PHASES = """
[[phase]]
name = "first"
start = 2026-03-01T00:00:00Z
end = 2026-04-01T00:00:00Z
submissions = "{kind}"

[[phase]]
name = "second"
start = 2026-04-15T00:00:00Z
end = 2026-06-01T00:00:00Z
submissions = "{kind}"
"""
ROLES = ("anonymous", "alpha", "beta", "organizer")
TERMS = "# Terms\n\nBy taking part you agree to share your method.\n"
NO_TRACK = "no-such-track"
WRITTEN_META = "a meta.mat written for the shape"


@dataclass
class Shape:
    """A contest to serve: its file (written by ``make``), and what each team sends."""

    name: str
    challenge: str
    kind: str = "files"
    split: bool = True
    parameters: dict[str, Any] = field(default_factory=dict)
    example: str | None = None  # examples/contests/NAME
    public_list: tuple[str, ...] = ()  # the public units, listed (else a drawn half, when split)
    every_page_in_chromium: bool = (
        False  # else Chromium opens the pages that differ by challenge only: the board and a report
    )
    track: str | None = None  # a contest of several tracks: the one the teams send to
    service: str = ""  # a [service] table appended to an example's file; its terms are written as terms.md

    def make(self, folder: Path) -> tuple[Path, Path, Path]:
        """The contest file, a good submission (file or folder) and a bad one, in ``folder``."""
        demo_data = folder / "demo-data"
        if self.example is not None:
            contest = _example(self.example, folder, demo_data)
            if self.service:
                (contest.parent / "terms.md").write_text(TERMS)
                contest.write_text(contest.read_text() + self.service)
        else:
            demo = get(self.challenge).write_demo(demo_data / self.challenge)
            parameters = {
                k: v for k, v in demo.settings.items() if k not in _measured(self.challenge)
            } | self.parameters
            contest = folder / "contest.toml"
            images = f'images = "{_program_images(demo.truth)}"\n' if self.kind == "programs" else ""
            split = "[split]\npublic = 0.5\nseed = 7\n" if self.split else ""
            if self.public_list:
                (folder / "public.txt").write_text("".join(f"{unit}\n" for unit in self.public_list))
                split = '[split]\npublic_list = "public.txt"\n'
            if parameters.get("meta") == WRITTEN_META:
                write_meta(folder / "meta.mat", 0)
                parameters["meta"] = str(folder / "meta.mat")
            contest.write_text(
                f'id = "{self.name}"\ntitle = "Shape {self.name}"\nchallenge = "{self.challenge}"\ntruth = "{demo.truth}"\n{images}timezone = "Europe/Berlin"\n'
                f"[parameters]\n{_toml(parameters)}\n{split}{PHASES.format(kind=self.kind)}\n"
                + ("[limits]\nmemory_mb = 2048\ntime_s = 60\n" if self.kind == "programs" else "")
                + '[quota]\nper_day = 5\n[ranking]\ndecimals = 3\nfinal = "best"\n'
            )
        loaded = load(contest).on(self.track)
        demo = get(loaded.challenge).write_demo(folder / "submissions")
        good = (
            demo.submission if loaded.truth.is_relative_to(folder) else loaded.truth.parent / "submission"
        )  # ../shared data: its own submission
        if loaded.phases[0].submissions == "programs":
            good = folder / "program"
            good.mkdir()
            shutil.copy(
                EXAMPLES / "face-clustering" / "participant.py", good / "run.py"
            ) if loaded.challenge == "face-clustering" else _fuzzy_program(good, demo.submission)
        bad = folder / "bad.txt"
        bad.write_text("not a submission\n")
        return contest, good, bad


def _program_images(truth: Path) -> Path:
    """The folder programs read: the demo's photos (face-clustering), or copies of the truth's images (fuzzy-jaccard's demo has no other)."""
    images = truth.parent / "images"
    if not images.exists():
        images.mkdir()
        for png in truth.glob("*.png"):
            shutil.copy(png, images / png.name)
    return images


def _measured(challenge: str) -> set[str]:
    return {p.name for p in get(challenge).parameters if p.role == "measured"}


def _toml(values: dict[str, Any]) -> str:
    return "\n".join(f"{k} = {json.dumps(v)}" for k, v in values.items())


def _example(name: str, folder: Path, demo_data: Path) -> Path:
    """The example's contest file where its relative paths hold: ``folder/examples/contests/NAME``, ``folder/demo-data/`` filled by write_demo."""
    text = (EXAMPLES / name / "contest.toml").read_text()
    if "shared/data" in text:
        needed = SHARED / "data" / re.search(r"shared/data/([\w-]+)", text).group(1)  # type: ignore[union-attr]
        if not needed.exists():
            pytest.skip(f"the example {name} reads {needed}, which is absent")
        return EXAMPLES / name / "contest.toml"
    copy = folder / "examples" / "contests" / name
    shutil.copytree(EXAMPLES / name, copy)
    for challenge in set(re.findall(r"demo-data/([\w.-]+)/", text)):
        get(challenge).write_demo(demo_data / challenge)
    return copy / "contest.toml"


def _fuzzy_program(code: Path, outputs: Path) -> None:
    """A fuzzy-jaccard program that writes the demo's outputs, which travel in its archive."""
    shutil.copytree(outputs, code / "outputs")
    (code / "run.py").write_text(
        "import os, shutil\nshutil.copytree(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'outputs'), '.', dirs_exist_ok=True)\n"
    )


SHAPES = [
    Shape("example-demo", "glas", example="demo", every_page_in_chromium=True),
    Shape("example-glas-fixture", "glas", example="glas-fixture"),
    Shape(
        "example-face-clustering", "face-clustering", "programs", example="face-clustering", every_page_in_chromium=True
    ),
    Shape("glas-split-parts", "glas", parameters={"parts": ["testA", "testB"]}, every_page_in_chromium=True),
    Shape("glas-parts", "glas", split=False, parameters={"parts": ["testA", "testB"]}),
    Shape("fuzzy-jaccard", "fuzzy-jaccard"),
    Shape("fuzzy-jaccard-programs", "fuzzy-jaccard", "programs", split=False),
    Shape("camera-traps", "camera-traps"),
    Shape(
        "face-clustering", "face-clustering", split=False, parameters={"th1_s": 600, "th2_s": 1200, "ram_max_mb": 4096}
    ),
    Shape(
        "glas-parts-one-public", "glas", parameters={"parts": ["testA", "testB"]}, public_list=("testA_1", "testA_2")
    ),
    Shape("ilsvrc2012-cls-meta", "ilsvrc2012-cls", split=False, parameters={"meta": WRITTEN_META}),
    Shape("ilsvrc2012-loc", "ilsvrc2012-loc", every_page_in_chromium=True),
    Shape("ilsvrc2012-fine", "ilsvrc2012-fine"),
    Shape(
        "example-ilsvrc2012-tasks",
        "ilsvrc2012-loc",
        example="ilsvrc2012-tasks",
        track="loc",
        service='\n[service]\nself_registration = true\nterms = "terms.md"\n',
        every_page_in_chromium=True,
    ),
]


class Visitor:
    """One role's requests: a session cookie for pages, a bearer token for the API, redirects not followed."""

    class _NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *_: Any) -> None:
            return None

    def __init__(self, url: str, session: str | None, token: str | None) -> None:
        self.url, self.session, self.token = url, session, token
        self.opener = urllib.request.build_opener(self._NoRedirect)

    def get(self, path: str, api: bool = False) -> tuple[int, str, str]:
        """(status, content type, body) of ``GET path``."""
        headers = {"Accept": "application/json"} if api else {"Accept": "text/html"}
        if api and self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if not api and self.session:
            headers["Cookie"] = f"{COOKIE}={self.session}"
        try:
            with self.opener.open(urllib.request.Request(self.url + path, headers=headers), timeout=60) as response:
                return response.status, response.headers.get("content-type", ""), response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.headers.get("content-type", ""), error.read().decode()


@dataclass
class Served:
    """A shape's contest served, its teams' tokens and submissions."""

    live: LiveServer
    clock: Clock
    worker: Worker
    tokens: dict[str, str]
    contest: Path
    folder: Path  # the test's own: what is sent is staged here (an example's contest file may be the repository's)
    track: str | None = None  # the track the teams send to, in a contest of several
    sent: dict[str, list[int]] = field(default_factory=dict)  # team -> its submission ids
    filenames: dict[str, list[str]] = field(default_factory=dict)

    def visitors(self) -> dict[str, Visitor]:
        """Each role, with a page session opened now (sessions end 12 h after their log-in; the moments are weeks apart)."""
        sessions: dict[str, str | None] = {"anonymous": None}
        with writing(self.worker.engine) as connection:
            for role, user in (("alpha", "ann"), ("beta", "bob"), ("organizer", "olga")):
                row, now = accounts.user_row(connection, user), self.clock()
                sessions[role] = accounts.new_token(
                    connection,
                    None,  # a user's session: their role is read in the contest of each request (migration 0006)
                    False,
                    f"session of {user}",
                    now,
                    expires=now + accounts.SESSION,
                    user_id=row.id,
                    session=True,
                )
        return {role: Visitor(self.live.url, sessions[role], self.tokens.get(role)) for role in ROLES}

    def on(self, path: str) -> str:
        """``path`` on the teams' track (``?track=ID`` added), in a contest of several tracks."""
        return path if self.track is None else f"{path}{'&' if '?' in path else '?'}track={self.track}"

    def score_all(self) -> None:
        for _ in range(100):  # bounded
            if not self.worker.work_once():
                return
        raise AssertionError("the queue did not empty")


def _serve(shape: Shape, folder: Path) -> Iterator[tuple[Served, Path, Path]]:
    contest, good, bad = shape.make(folder)
    clock = Clock(load(contest).phases[0].start)
    service, tokens = set_up(f"sqlite:///{folder / 'podium.db'}", contest, folder / "data", ("alpha", "beta"), clock)
    with writing(service.engine) as connection:
        accounts.add_user(connection, "ann", "ann-password-1", 1, False, clock())
        accounts.add_user(connection, "bob", "bob-password-1", 2, False, clock())
        accounts.add_user(connection, "olga", "olga-password-1", None, True, clock())
        tokens["organizer"] = accounts.new_token(connection, None, True, "test", clock())
    with LiveServer(service) as live:
        worker = Worker(service.engine, service.data, clock=clock)
        yield Served(live, clock, worker, tokens, contest, folder, shape.track), good, bad


def _send(served: Served, team: str, path: Path, name: str, browser: Any = None) -> None:
    """Send ``path`` as ``team``'s submission named ``name``: through the API, or the upload form in Chromium with JavaScript off.

    A program is sent without its entry point: the server finds the archive's only one.
    """
    staged = served.folder / "sent" / team
    staged.mkdir(parents=True, exist_ok=True)
    upload = packed(path, staged)
    named = staged / (name + "".join(upload.suffixes))
    shutil.copy(upload, named)
    if browser is None:
        answer = submit(served.live.url, served.tokens[team], named, track=served.track)
        assert answer.status in (201, 422), answer.body
        sent = int(answer.body["id"])
    else:
        context = browser.new_context(java_script_enabled=False)
        context.add_cookies([{"name": COOKIE, "value": served.visitors()[team].session, "url": served.live.url}])
        page = context.new_page()
        page.goto(served.live.url + served.on("/submissions"))
        page.set_input_files("#file", str(named))
        page.click("#upload button")
        page.wait_for_url("**/submissions?sent=*")
        sent = int(parse_qs(urlsplit(page.url).query)["sent"][0])
        assert f"Submission #{sent} ({named.name})" in page.inner_text("#upload-result")
        context.close()
    served.sent.setdefault(team, []).append(sent)
    served.filenames.setdefault(team, []).append(named.name)


def _routes(served: Served, board_columns: list[str], first_moment: bool) -> list[tuple[str, bool, bool]]:
    """(path, API?, the same for every role?) of every route: those that are the same for all are walked by two roles only."""
    ids = [i for team_ids in served.sent.values() for i in team_ids]
    on = served.on
    common = ["/", on("/leaderboard"), on("/leaderboard/table"), "/login", "/no-such-page"] + [
        on(f"/leaderboard?sort={c}") for c in ["team", *board_columns]
    ]
    common += ["/register", "/terms", "/reset", "/reset/not-a-reset-token"]  # the account pages anyone may open
    common_api = ["/api/contest", on("/api/leaderboard")] + (["/healthz", "/openapi.json"] if first_moment else [])
    if served.track is not None:  # a contest of several tracks: a board without its track, or with an unknown one
        common += [f"/leaderboard?track={NO_TRACK}"]
        common_api += ["/api/leaderboard", f"/api/leaderboard?track={NO_TRACK}"]
    if first_moment:
        common.append("/docs")
    pages = ["/submissions", on("/submissions"), "/submissions/rows", "/organizer", "/account", "/submissions/999999"]
    pages += ["/join"]  # a team created or joined by a signed-in user
    pages += [f"/submissions/{i}" for i in ids]
    pages += [
        f"/submissions/{i}?sort=-{column}" for i in ids[:1] for column in ("f1", "no-such-column")
    ]  # the per-item table, sorted
    api = ["/api/submissions", on("/api/quota"), "/api/submissions/999999"] + [f"/api/submissions/{i}" for i in ids]
    return (
        [(p, False, True) for p in common]
        + [(p, True, True) for p in common_api]
        + [(p, False, False) for p in pages]
        + [(p, True, False) for p in api]
    )


def _expected(served: Served, role: str, path: str, api: bool) -> int:
    """The status ``role`` must get for ``GET path``."""
    if path == "/no-such-page":
        return 404
    if f"track={NO_TRACK}" in path or (path == "/api/leaderboard" and served.track is not None):
        return 422  # the contest has no such track, or several and none is named
    service = load(served.contest).service
    if path in ("/register", "/terms"):
        return 200 if (service.self_registration if path == "/register" else service.terms is not None) else 404
    if path.startswith("/reset"):
        return 200 if path == "/reset" else 404  # a reset link that was never sent
    if path == "/account":
        return 303 if role == "anonymous" else 200
    if path == "/join":  # no sign-ups: 404 as /register; else the log-in page for a visitor
        return 404 if not service.self_registration else 303 if role == "anonymous" else 200
    owner = next(
        (team for team, ids in served.sent.items() if path.split("?")[0].rsplit("/", 1)[-1] in map(str, ids)), "nobody"
    )
    mine = owner != "nobody" and (role == "organizer" or owner == role)
    if api:
        if not path.startswith(("/api/submissions", "/api/quota")):
            return 200
        if role == "anonymous":
            return 401
        if path.startswith("/api/quota"):
            return 403 if role == "organizer" else 200
        return 200 if path == "/api/submissions" or mine else 404
    if not path.startswith(("/submissions", "/organizer")):
        return 200
    if role == "anonymous":
        return 303
    if path == "/organizer":
        return 200 if role == "organizer" else 403
    return 200 if path in ("/submissions", served.on("/submissions"), "/submissions/rows") or mine else 404


def _walk(served: Served, moment: str, revealed: bool, first_moment: bool = False) -> None:
    """Every route for every role: the expected status, HTML errors for pages, JSON for the API, no other team's data."""
    board = served.live.call("GET", served.on("/api/leaderboard")).body
    columns = [c["name"] for c in board["criteria"]]
    problems = []
    for role, visitor in served.visitors().items():
        for path, api, common in _routes(served, columns, first_moment):
            if common and role not in ("anonymous", "alpha"):
                continue
            status, kind, body = visitor.get(path, api)
            want = _expected(served, role, path, api)
            where = f"{moment}, {role}, GET {path}"
            if status != want:
                problems.append(f"{where}: {status} (expected {want}): {body[:300]}")
                continue
            if status >= 400:
                wanted_kind = "application/json" if api else "text/html"
                if not kind.startswith(wanted_kind) or (not api and '<nav aria-label="main">' not in body):
                    problems.append(f"{where}: a {status} answered as {kind}, not a {wanted_kind} page: {body[:200]}")
            if role in ("alpha", "beta") and status == 200:
                other = "beta" if role == "alpha" else "alpha"
                leaked = [name for name in served.filenames.get(other, []) if name in body] + [
                    p for p in (str(served.contest.parent),) if p in body
                ]
                if leaked:
                    problems.append(f"{where}: shows the other team's files or the server's folders: {leaked}")
                if api and path.startswith("/api/submissions/") and not revealed:
                    result = json.loads(body).get("result") or {}
                    if "private" in (result.get("splits") or {}) or (result.get("splits") and result.get("scores")):
                        problems.append(f"{where}: a private score before the reveal")
    assert not problems, "\n".join(problems)


def _errors_of_scripts_are_json(served: Served) -> None:
    """The upload's script asks for JSON and gets its errors as JSON (it shows the detail); a browser's form gets the HTML page."""
    session = served.visitors()["alpha"].session
    for accept, kind in (("application/json", "application/json"), ("text/html,*/*;q=0.8", "text/html")):
        headers = {
            "Cookie": f"{COOKIE}={session}",
            "X-CSRF-Token": "forged",
            "Accept": accept,
            "Content-Type": "application/octet-stream",
        }
        try:
            urllib.request.urlopen(
                urllib.request.Request(served.live.url + "/submissions/upload?filename=a.txt", b"x", headers),
                timeout=30,
            )
            raise AssertionError("a forged CSRF token was taken")
        except urllib.error.HTTPError as error:
            assert error.code == 403 and error.headers.get("content-type", "").startswith(kind), (accept, error.headers)
            assert "CSRF" in error.read().decode()


def _board_says_what_ranks(served: Served, decimals: int | None) -> None:
    """The board page: scores to the contest's decimals, titled columns, shares of first places that sum to 100%."""
    board = served.live.call("GET", served.on("/api/leaderboard")).body
    page = served.visitors()["anonymous"].get(served.on("/leaderboard"))[2]
    for team in board["teams"]:
        for name, value in team["scores"].items():
            if value is not None and name in {c["name"] for c in board["criteria"]}:
                assert f"{value:.{4 if decimals is None else decimals}f}" in page, (name, value)
    assert all(f">{title(c['name'])}</a>" in page for c in board["criteria"])
    firsts = [float(share) for share in re.findall(r'<td class="num">([\d.]+)%</td>', page)]
    assert not firsts or abs(sum(firsts) - 100) <= 0.1 * len(firsts), firsts


def _shows_how_programs_ran(served: Served, challenge: str) -> None:
    """A program's time and peak RAM (and their points, where the rule gives some) are columns of the board and rows of the report."""
    board = served.live.call("GET", served.on("/api/leaderboard")).body
    expected = ["time (s)", "peak RAM (MB)"] + (["time points", "RAM points"] if challenge == "face-clustering" else [])
    assert board["measured"] == expected, board
    assert all(
        isinstance(t["measured"]["time (s)"], float) and t["measured"]["peak RAM (MB)"] > 0 for t in board["teams"]
    ), board["teams"]
    visitor = served.visitors()["alpha"]
    page = visitor.get(served.on("/leaderboard"))[2]
    report = visitor.get(f"/submissions/{served.sent['alpha'][0]}")[2]
    assert all(f'<th scope="col">{column}</th>' in page for column in expected)
    assert "How the program ran" in report and all(f"<td>{column}</td>" in report for column in expected)


def _scores_equal_evaluate(served: Served, good: Path) -> None:
    """Each scored file submission's served scores (whole and each split) are those of ``podium evaluate --contest``."""
    run = CliRunner().invoke(
        cli,
        ["evaluate", "--contest", str(served.contest), "--submission", str(good), "--json", "-", "--workers", "1"]
        + (["--track", served.track] if served.track else []),
    )
    assert run.exit_code in (0, 1), run.output
    expected = json.loads(run.stdout)
    organizer = served.tokens["organizer"]
    for team in ("alpha", "beta"):
        shown = served.live.call("GET", f"/api/submissions/{served.sent[team][0]}", organizer).body
        assert shown["status"] == "scored", shown
        assert shown["result"]["scores"] == expected["scores"]
        for name, split in (expected.get("splits") or {}).items():
            assert shown["result"]["splits"][name]["scores"] == split["scores"]


@pytest.mark.parametrize("shape", SHAPES, ids=[s.name for s in SHAPES])
def test_every_route_for_every_role_and_moment(shape: Shape, tmp_path: Path, pages_browser: Any) -> None:
    if shape.kind == "programs" and not Path("/usr/bin/bwrap").exists():
        require("bwrap", "/usr/bin/bwrap is missing (Debian package bubblewrap): programs cannot run")
    served_iter = _serve(shape, tmp_path)
    served, good, bad = next(served_iter)
    try:
        contest = load(served.contest).on(shape.track)
        first, second = contest.phases[0], contest.phases[-1]
        served.clock.now = first.start
        _walk(served, "before any submission", revealed=False, first_moment=True)
        _errors_of_scripts_are_json(served)

        _send(served, "alpha", good, "alpha-good", pages_browser if shape.every_page_in_chromium else None)
        _send(served, "alpha", bad, "alpha-bad")
        _send(served, "beta", good, "beta-good")
        served.score_all()
        statuses = {
            i: served.live.call("GET", f"/api/submissions/{i}", served.tokens["organizer"]).body["status"]
            for ids in served.sent.values()
            for i in ids
        }
        assert list(statuses.values()) == ["scored", "rejected", "scored"], statuses
        _walk(served, "after scored and rejected submissions", revealed=False)
        if contest.phases[0].submissions == "programs":
            _shows_how_programs_ran(served, contest.challenge)
        _board_says_what_ranks(served, contest.ranking.decimals)
        if contest.challenge == "glas":
            report = served.visitors()["alpha"].get(f"/submissions/{served.sent['alpha'][0]}?sort=-f1")[2]
            f1s = [
                float(v)
                for v in re.findall(
                    r'<tr><td>test[AB]_\d</td><td class="num">[^<]*</td><td class="num">[^<]*</td><td class="num">[^<]*</td><td class="num">([\d.]+)</td>',
                    report,
                )
            ]
            assert f1s and f1s == sorted(f1s, reverse=True), report  # the per-image table, by F1 from the best
        submissions_page = served.visitors()["alpha"].get(served.on("/submissions"))[2]
        assert re.search(
            r"Quota(?: on track [\w-]+)?: 1 of \d+ used today; the next day starts at \d\d:\d\d [\w ]+ \(in \d+ h",
            submissions_page,
        ), submissions_page  # a sentence, not a dump
        if pages_browser is not None:
            _browse(pages_browser, served, shape.name, shape.every_page_in_chromium)

        if len(contest.phases) > 1 and first.end < second.start:
            served.clock.now = first.end + (second.start - first.end) / 2
            _walk(served, "between phases", revealed=False)
        served.clock.now = second.end + timedelta(days=1)
        _walk(served, "after the reveal", revealed=True)
        rescore(served.worker.engine)
        served.score_all()
        _walk(served, "after a rescore", revealed=True)
        if contest.phases[0].submissions == "files":
            _scores_equal_evaluate(served, good)
    finally:
        next(served_iter, None)


@pytest.fixture(scope="module")
def pages_browser() -> Iterator[Any]:
    """Chromium, or ``None`` (the HTTP walk still runs) when it is missing outside CI."""
    problem = chromium_problem()
    if problem is not None:
        require("chromium", problem)  # fails in CI
        yield None
        return
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = launch(playwright)
        yield chromium
        chromium.close()


def _console_error(message: Any, url: str = "") -> str:
    """A console message as ``URL: text`` (``message`` a Playwright console message, or its text with ``url``)."""
    if isinstance(message, str):
        return f"{url}: {message}"
    return f"{message.location.get('url')}: {message.text}"


def _browse(browser: Any, served: Served, shape: str, every_page: bool) -> None:
    """Every page each role can open, in Chromium at desktop and phone width: no script or console error, no policy violation,
    no sideways scroll on the phone, a screenshot each.

    axe-core checks each page once, at desktop width (the phone's page is the same document, laid out narrower).
    """
    SHOTS.mkdir(parents=True, exist_ok=True)
    own = {team: ids[0] for team, ids in served.sent.items()}
    on = served.on
    pages = {
        "anonymous": ["/", on("/leaderboard"), "/login", "/register", "/terms", "/reset", "/docs"],
        "alpha": [
            on("/submissions"),
            f"/submissions/{own['alpha']}",
            f"/submissions/{own['beta']}",
            "/organizer",
            "/account",
        ],
        "organizer": ["/organizer", "/submissions", f"/submissions/{own['beta']}", on("/leaderboard"), "/account"],
    }
    if not every_page:
        pages = {"alpha": [on("/leaderboard"), f"/submissions/{own['alpha']}"]}
    sessions = {role: v.session for role, v in served.visitors().items()}
    for width, height, label in ((1200, 900, "desktop"), (375, 800, "phone")):
        for role, paths in pages.items():
            context = browser.new_context(viewport={"width": width, "height": height})
            if sessions.get(role):
                context.add_cookies([{"name": COOKIE, "value": sessions[role], "url": served.live.url}])
            page = context.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e, seen=errors: seen.append(str(e)))
            page.on("console", lambda m, seen=errors: seen.append(_console_error(m)) if m.type == "error" else None)
            expected: set[str] = set()
            for path in paths:
                answer = page.goto(served.live.url + path)
                assert answer is not None and answer.status in (200, 403, 404), (
                    shape,
                    role,
                    path,
                    answer and answer.status,
                )
                if answer.status != 200:  # the browser's own line about the page's status, not an error of the page
                    status_line = f"Failed to load resource: the server responded with a status of {answer.status} ({answer.status_text})"
                    expected.add(_console_error(status_line, page.url))
                assert page.locator("h1").count() == 1, (shape, role, path)
                wait_until(
                    page,
                    "[...document.querySelectorAll('div.vega')].every(e => ['true', 'error'].includes(e.dataset.rendered))",
                    timeout=20_000,
                )
                assert page.locator("div.vega[data-rendered=error]").count() == 0, (shape, role, path, "a chart failed")
                name = f"{shape}--{role}--{re.sub(r'[/?=&]+', '-', path.strip('/')) or 'contest'}--{label}.png"
                if label == "desktop":
                    assert_accessible(page, name)
                page.screenshot(path=str(SHOTS / name), full_page=True)
                if label == "phone":
                    assert page.evaluate("document.documentElement.scrollWidth") <= width + 1, (
                        shape,
                        role,
                        path,
                        "scrolls sideways",
                    )
            page.wait_for_timeout(100)  # the last page's console lines delivered
            unexpected = [e for e in errors if e not in expected]
            assert not unexpected, (shape, role, unexpected)
            context.close()
