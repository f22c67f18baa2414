"""The submissions page's forms over HTTP (no browser): cancel a queued submission, select final ones, by the API's rules.

One live server for the module: a contest whose final ranking uses the
submissions each team selects (at most one), on ILSVRC's demo (scored in 0.1 s), two teams, ``ann`` of alpha and
``bob`` of beta logged in through the pages.
"""

from __future__ import annotations

import csv
import io
import json
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from podium.cli import cli
from podium.contest.split import draw_public
from podium.service import accounts, methods
from podium.service.app import Service
from podium.service.board_files import board_csv
from podium.service.client import packed, request
from podium.service.database import writing
from podium.service.intake import Refused
from podium.service.pages import COOKIE
from podium.service.worker import Worker
from service_helpers import Clock, LiveServer, at, demo_archive, set_up, write_contest
from test_pages import Client, _log_in

FORM = {"Content-Type": "application/x-www-form-urlencoded"}
NOW = at("2026-03-10T12:00:00Z")
END = at("2026-06-01T00:00:00Z")  # the contest's only phase ends


@dataclass
class Site:
    live: LiveServer
    clock: Clock
    worker: Worker
    tokens: dict[str, str]
    archive: Path
    ann: Client
    bob: Client
    service: Service

    def upload(self, team: str) -> int:
        answer = self.live.call(
            "POST", "/api/submissions", self.tokens[team], body=self.archive, query={"filename": "s.tar.gz"}
        )
        assert answer.status == 201, answer.body
        return int(answer.body["id"])

    def scored(self, team: str) -> int:
        submission_id = self.upload(team)
        assert self.worker.work_once()
        return submission_id

    def form(self, client: Client, path: str, fields: str = "") -> int:
        csrf = accounts.csrf_token(client.cookies[COOKIE])
        return client.post(path, f"csrf={csrf}" + (f"&{fields}" if fields else ""), FORM)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    folder = tmp_path_factory.mktemp("forms")
    contest = write_contest(
        folder / "contest", "ilsvrc2012-cls", quota="per_day = 20", ranking='final = "selected"\nmax_selected = 1'
    )
    clock = Clock(NOW)
    service, tokens = set_up(f"sqlite:///{folder / 'podium.db'}", contest, folder / "data", ("alpha", "beta"), clock)
    with writing(service.engine) as connection:
        accounts.add_user(connection, "ann", "ann-password-1", 1, False, clock())
        accounts.add_user(connection, "bob", "bob-password-1", 2, False, clock())
    worker = Worker(service.engine, service.data, clock=clock)
    with LiveServer(service) as live:
        ann, bob = Client(live.url), Client(live.url)
        assert _log_in(ann) == 303 and _log_in(bob, "bob", "bob-password-1") == 303
        yield Site(live, clock, worker, tokens, demo_archive(contest, folder / "upload"), ann, bob, service)


def test_cancel_a_queued_submission_from_the_page(site: Site) -> None:
    queued = site.upload("alpha")
    assert site.ann.get("/submissions") == 200 and f"Cancel #{queued}".encode() in site.ann.body
    assert site.ann.post(f"/submissions/{queued}/cancel", "csrf=forged", FORM) == 403
    assert site.form(site.bob, f"/submissions/{queued}/cancel") == 404  # another team's: as if it did not exist
    assert f"no submission {queued} of yours" in site.bob.body.decode().lower()
    assert site.form(site.ann, f"/submissions/{queued}/cancel") == 303
    assert site.live.call("GET", f"/api/submissions/{queued}", site.tokens["alpha"]).body["status"] == "cancelled"
    assert site.form(site.ann, f"/submissions/{queued}/cancel") == 409  # the API's rule and message
    assert b"only a queued one can be cancelled" in site.ann.body
    assert site.ann.get("/submissions?done=submission+1+is+cancelled") == 200 and b"is cancelled" in site.ann.body
    assert site.form(site.ann, "/submissions/99999999999/cancel") == 404  # no such id (beyond the database's)


def test_select_within_the_limit_until_the_last_phase_closes(site: Site) -> None:
    first, second = site.scored("alpha"), site.scored("alpha")
    assert site.ann.get("/submissions") == 200 and f"Select #{first}".encode() in site.ann.body
    assert b"at most 1" in site.ann.body
    assert site.form(site.ann, f"/submissions/{first}/selected", "selected=maybe") == 422
    assert site.form(site.bob, f"/submissions/{first}/selected", "selected=true") == 404
    assert site.form(site.ann, f"/submissions/{first}/selected", "selected=true") == 303
    assert site.form(site.ann, f"/submissions/{second}/selected", "selected=true") == 409  # the limit, exactly at 1
    assert b"1 submissions are selected, the most this contest allows" in site.ann.body
    assert site.ann.get("/submissions") == 200 and f"Unselect #{first}".encode() in site.ann.body
    site.clock.now = END - timedelta(microseconds=1)  # the last instant selections are taken
    assert _log_in(site.ann) == 303  # a session of that day
    assert site.form(site.ann, f"/submissions/{first}/selected", "selected=false") == 303
    assert site.form(site.ann, f"/submissions/{second}/selected", "selected=true") == 303
    site.clock.now = END
    assert site.form(site.ann, f"/submissions/{first}/selected", "selected=true") == 409
    assert b"elections froze" in site.ann.body
    assert (
        site.ann.get("/submissions") == 200 and b"Select #" not in site.ann.body and b"<b>selected</b>" in site.ann.body
    )
    chosen = {s["id"]: s["selected"] for s in site.live.call("GET", "/api/submissions", site.tokens["alpha"]).body}
    assert chosen[first] is False and chosen[second] is True
    site.clock.now = NOW


def test_downloads_are_the_teams_own(site: Site) -> None:
    """The file as uploaded, the result (public view before the reveal), the logs: to the team, by API and page; 404 to another."""
    submission_id, alpha = site.upload("alpha"), site.tokens["alpha"]
    kinds = ("file", "result", "logs")
    assert site.live.call("GET", f"/api/submissions/{submission_id}/result", alpha).status == 404  # not scored yet
    assert site.worker.work_once()
    sent = site.archive.read_bytes()
    assert site.ann.get(f"/submissions/{submission_id}/file") == 200 and site.ann.body == sent
    with tempfile.TemporaryFile() as sink:
        assert request(site.live.url, "GET", f"/api/submissions/{submission_id}/file", alpha, into=sink).status == 200
        sink.seek(0)
        assert sink.read() == sent
    result = site.live.call("GET", f"/api/submissions/{submission_id}/result", alpha)
    assert result.status == 200 and result.body["view"] == "public" and "private" not in result.body["splits"]
    assert site.ann.get(f"/submissions/{submission_id}/result") == 200 and b'"view": "public"' in site.ann.body
    logs = site.live.call("GET", f"/api/submissions/{submission_id}/logs", alpha)
    assert logs.status == 404 and "no program ran" in logs.message  # a submission of files
    missing = 2**31 - 1
    for kind in kinds:  # another team's submission answers as one that does not exist
        theirs = site.live.call("GET", f"/api/submissions/{submission_id}/{kind}", site.tokens["beta"])
        none = site.live.call("GET", f"/api/submissions/{missing}/{kind}", site.tokens["beta"])
        assert (theirs.status, none.status) == (404, 404)
        assert theirs.message == f"no submission {submission_id} of yours"
        assert site.bob.get(f"/submissions/{submission_id}/{kind}") == 404
        assert site.live.call("GET", f"/api/submissions/{submission_id}/{kind}", None).status == 401  # no token
        assert Client(site.live.url).get(f"/submissions/{submission_id}/{kind}") == 303  # to the log-in page
    assert site.ann.get(f"/submissions/{submission_id}/other") == 404
    assert site.ann.get(f"/submissions/{submission_id}") == 200 and b"the file as uploaded" in site.ann.body


def test_the_commands_download_select_and_cancel(site: Site, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    scored, queued = site.scored("alpha"), site.upload("alpha")
    common = ["--server", site.live.url, "--token", site.tokens["alpha"]]

    def podium(*args: str) -> Result:
        return CliRunner().invoke(cli, [args[0], *common, *args[1:]])

    got = podium("download", str(scored))
    assert got.exit_code == 0, got.output
    assert (tmp_path / "s.tar.gz").read_bytes() == site.archive.read_bytes()
    assert podium("download", str(scored)).exit_code == 2  # the file is there: not overwritten
    got = podium("download", str(scored), "--what", "result", "--out", "-")
    assert got.exit_code == 0 and json.loads(got.stdout)["view"] == "public"
    got = podium("download", str(scored), "--what", "logs")
    assert (
        got.exit_code == 2
        and "no program ran" in got.output
        and not (tmp_path / f"submission-{scored}-logs.txt").exists()
    )
    got = CliRunner().invoke(cli, ["download", "--server", site.live.url, "--token", site.tokens["beta"], str(scored)])
    assert got.exit_code == 2 and f"no submission {scored} of yours" in got.output
    assert podium("cancel", str(queued)).output == f"submission {queued}: cancelled\n"
    got = podium("cancel", str(queued))
    assert got.exit_code == 2 and "only a queued one can be cancelled" in got.output
    for submission in site.live.call("GET", "/api/submissions", site.tokens["alpha"]).body:
        if submission["selected"]:
            assert podium("select", str(submission["id"]), "--unselect").exit_code == 0
    assert podium("select", str(scored)).output == f"submission {scored}: selected\n"
    assert (
        podium("select", str(scored), "--unselect", "--json").stdout
        == json.dumps({"id": scored, "selected": False}, indent=2) + "\n"
    )


def _split_apart(truth: Path, folder: Path, right_on_public: bool) -> Path:
    """An ILSVRC submission right (top 5 holds the label) on one split's units and wrong on the other's: a shake-up."""
    labels = [int(line) for line in truth.read_text().split()]
    units = [f"ILSVRC2012_val_{i:08d}" for i in range(1, len(labels) + 1)]
    public = draw_public(units, 0.5, 7)
    lines = []
    for unit, label in zip(units, labels, strict=True):
        right = (unit in public) == right_on_public
        guesses = [label] if right else []
        guesses += [g for g in range(1, 1001) if g != label][: 5 - len(guesses)]
        lines.append(" ".join(map(str, guesses)))
    folder.mkdir(parents=True)
    (folder / "team.txt").write_text("\n".join(lines) + "\n")
    return packed(folder, folder.parent)


def test_the_board_marks_the_team_and_shows_the_shake_up(site: Site, tmp_path: Path) -> None:
    truth = site.archive.parent.parent / "contest" / "demo" / "ground_truth.txt"
    for team, right_on_public in (("alpha", True), ("beta", False)):
        archive = _split_apart(truth, tmp_path / team / "files", right_on_public)
        answer = site.live.call(
            "POST", "/api/submissions", site.tokens[team], body=archive, query={"filename": "t.tar.gz"}
        )
        assert answer.status == 201 and site.worker.work_once()
    board = site.live.call("GET", "/api/leaderboard").body
    rows = {t["team"]: t for t in board["teams"]}
    assert [t["team"] for t in board["teams"]] == ["alpha", "beta"] and "public_rank" not in rows["alpha"]
    listed = site.live.call("GET", "/api/submissions", site.tokens["alpha"]).body
    assert rows["alpha"]["entries"] == sum(s["status"] == "scored" for s in listed) and rows["beta"]["entries"] == 1
    assert rows["beta"]["last"] == NOW.isoformat()
    assert site.ann.get("/leaderboard") == 200
    page = site.ann.body.decode()
    assert 'id="mine"' in page and "Your team, alpha: rank 1" in page and page.count('class="mine"') == 1
    assert "data-spec=" in page and "<details>" in page  # the chart, and its numbers as a table without JavaScript
    assert site.bob.get("/leaderboard") == 200 and "Your team, beta: rank 2" in site.bob.body.decode()
    anonymous = Client(site.live.url)
    assert anonymous.get("/leaderboard") == 200 and b'id="mine"' not in anonymous.body
    assert site.ann.get("/leaderboard.csv") == 200
    text = site.ann.body.decode()
    table = list(csv.reader(io.StringIO(text)))
    assert table[0][:6] == ["rank", "team", "status", "entries", "last", "top5_error"] and table[1][1] == "alpha"
    assert site.ann.get("/leaderboard.json") == 200 and json.loads(site.ann.body) == board
    assert site.live.call("GET", "/api/leaderboard.csv").body == text
    assert CliRunner().invoke(cli, ["leaderboard", "--server", site.live.url, "--csv"]).stdout == text
    site.clock.now = END  # the reveal: the final ranking, the public rank beside it
    try:
        final = {t["team"]: t for t in site.live.call("GET", "/api/leaderboard").body["teams"]}
        assert (final["beta"]["rank"], final["beta"]["public_rank"]) == (1, 2)
        assert (final["alpha"]["rank"], final["alpha"]["public_rank"]) == (2, 1)
        assert _log_in(site.bob, "bob", "bob-password-1") == 303 and site.bob.get("/leaderboard") == 200
        page = site.bob.body.decode()
        assert '▲</span>1</span><span class="sr"> up' in page and '▼</span>1</span><span class="sr"> down' in page
        assert Client(site.live.url).get("/leaderboard.csv") == 200
    finally:
        site.clock.now = NOW


def test_the_csv_quotes_what_a_spreadsheet_would_run() -> None:
    board = {
        "revealed": True,
        "rank_sum": False,
        "criteria": [{"name": "f1", "higher_is_better": True}],
        "teams": [
            {
                "rank": 1,
                "public_rank": 2,
                "team": "=HYPERLINK(1)",
                "status": "scored",
                "entries": 3,
                "last": "2026-03-10T12:00:00+00:00",
                "scores": {"f1": -0.5},
                "rank_sum": None,
            },
            {
                "rank": 2,
                "public_rank": None,
                "team": "plain",
                "status": "none",
                "entries": 0,
                "last": None,
                "scores": {},
                "rank_sum": None,
            },
        ],
    }
    assert board_csv(board).decode().splitlines() == [
        "rank,public_rank,team,status,entries,last,f1",
        "1,2,'=HYPERLINK(1),scored,3,2026-03-10T12:00:00+00:00,-0.5",
        "2,,plain,none,0,,",
    ]


def test_a_method_is_the_teams_until_the_reveal_and_shown_after_it_if_chosen(site: Site) -> None:
    alpha, beta = site.tokens["alpha"], site.tokens["beta"]
    given = site.live.call(
        "POST",
        "/api/submissions",
        alpha,
        body=site.archive,
        query={
            "filename": "m.tar.gz",
            "method": "  Big   net ",
            "paper_url": "https://arxiv.org/abs/1",
            "shown": "true",
        },
    )
    assert given.status == 201
    view = site.live.call("GET", f"/api/submissions/{given.body['id']}", alpha).body
    assert (view["method"], view["paper_url"], view["shown"]) == ("Big net", "https://arxiv.org/abs/1", True)
    refused = site.live.call(
        "POST", "/api/submissions", alpha, body=site.archive, query={"code_url": "javascript:alert(1)"}
    )
    assert refused.status == 422 and "not an http:// or https:// address" in refused.message
    assert site.worker.work_once()
    final = given.body["id"]  # alpha's final submission: the one it selects
    listed = site.live.call("GET", "/api/submissions", alpha).body
    for submission in sorted(listed, key=lambda s: s["id"] == final):  # unselect the others first
        chosen = submission["id"] == final
        if submission["selected"] != chosen and submission["status"] == "scored":
            query = {"selected": "true" if chosen else "false"}
            assert (
                site.live.call("PUT", f"/api/submissions/{submission['id']}/selected", alpha, query=query).status == 200
            )
    body = {
        "method": "Ensemble <b>",
        "description": "line one\nline two",
        "code_url": "http://example.org/c",
        "shown": True,
    }
    said = site.live.call("PUT", f"/api/submissions/{final}/method", alpha, json_body=body)
    assert said.status == 200 and said.body == {**body, "paper_url": None}
    assert site.live.call("PUT", f"/api/submissions/{final}/method", beta, json_body=body).status == 404
    ranked = next(s["id"] for s in site.live.call("GET", "/api/submissions", beta).body if s["status"] == "scored")
    fields = "method=Secret+sauce&description=not+for+others&shown="  # unchecked: not shown
    assert site.form(site.bob, f"/submissions/{ranked}/method", fields) == 303
    assert site.form(site.bob, f"/submissions/{final}/method", fields) == 404  # alpha's
    assert site.bob.get(f"/submissions/{ranked}") == 200 and b"Secret sauce" in site.bob.body
    board = site.live.call("GET", "/api/leaderboard").body
    assert all("method" not in t for t in board["teams"])  # before the reveal: nobody's
    assert site.bob.get("/leaderboard") == 200 and b"Ensemble" not in site.bob.body
    site.clock.now = END
    try:
        rows = {t["team"]: t for t in site.live.call("GET", "/api/leaderboard").body["teams"]}
        assert rows["alpha"]["method"]["method"] == "Ensemble <b>" and "method" not in rows["beta"]
        assert _log_in(site.bob, "bob", "bob-password-1") == 303 and site.bob.get("/leaderboard") == 200
        page = site.bob.body.decode()
        assert "Ensemble &lt;b&gt;" in page and 'href="http://example.org/c"' in page and "Secret sauce" not in page
        late = site.live.call("PUT", f"/api/submissions/{final}/method", alpha, json_body=body)
        assert late.status == 409 and "methods are final" in late.message
    finally:
        site.clock.now = NOW


def test_the_commands_give_and_edit_a_method(site: Site, tmp_path: Path) -> None:
    common = ["--server", site.live.url, "--token", site.tokens["alpha"]]
    sent = CliRunner().invoke(
        cli, ["submit", *common, "--json", str(site.archive), "--method", "Tiny", "--code", "https://example.org/t"]
    )
    assert sent.exit_code == 0, sent.output
    submission_id = json.loads(sent.stdout)["id"]
    said = CliRunner().invoke(cli, ["describe", *common, str(submission_id), "--method", "Tiny 2", "--show-method"])
    assert said.stdout == f"submission {submission_id}: Tiny 2, shown on the leaderboard after the reveal\n"
    view = site.live.call("GET", f"/api/submissions/{submission_id}", site.tokens["alpha"]).body
    assert (view["method"], view["code_url"], view["shown"]) == ("Tiny 2", None, True)  # what is given replaces
    bad = CliRunner().invoke(cli, ["describe", *common, str(submission_id), "--paper", "ftp://x"])
    assert bad.exit_code == 2 and "not an http:// or https:// address" in bad.output
    site.worker.work_once()


def test_the_upload_form_without_javascript_takes_the_method(site: Site) -> None:
    boundary = "podium-form"
    fields = {"csrf": accounts.csrf_token(site.ann.cookies[COOKIE]), "method": "Form net", "shown": "on"}
    form = "".join(
        f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n' for k, v in fields.items()
    )
    form += f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="f.tar.gz"\r\n\r\n'
    body = form.encode() + site.archive.read_bytes() + f"\r\n--{boundary}--\r\n".encode()
    headers = {"Content-Type": f"multipart/form-data; boundary={boundary}"}
    assert site.ann.post("/submissions/upload", body, headers) == 303
    newest = site.live.call("GET", "/api/submissions", site.tokens["alpha"]).body[0]
    assert (newest["filename"], newest["method"], newest["shown"]) == ("f.tar.gz", "Form net", True)
    bad = form.replace("Form net", "x" * 101).encode() + site.archive.read_bytes() + f"\r\n--{boundary}--\r\n".encode()
    assert site.ann.post("/submissions/upload", bad, headers) == 422 and b"at most 100" in site.ann.body
    site.worker.work_once()


HOSTILE_NAMES = {  # as sent -> as kept and shown
    "../../etc/passwd": "passwd",
    "C:\\Users\\ann\\s.tar.gz": "s.tar.gz",
    "a\r\nSet-Cookie: x=1.tar.gz": "aSet-Cookie: x=1.tar.gz",
    "photo\u202egpj.tar.gz": "photogpj.tar.gz",  # the right-to-left override that shows it as ...zg.rat.jpg
    "nul\x00.tar.gz": "nul.tar.gz",
    "..": "submission",
    'e\u0301te\u0301 "q";.tar.gz': '\u00e9t\u00e9 "q";.tar.gz',  # NFC; a quote and a semicolon stay display text
}


def _disposition(site: Site, path: str, token: str) -> str:
    """The raw ``Content-Disposition`` of a GET, as the client receives it."""
    import http.client
    from urllib.parse import urlsplit

    where = urlsplit(site.live.url)
    connection = http.client.HTTPConnection(where.hostname or "", where.port, timeout=30)
    connection.request("GET", path, headers={"Authorization": f"Bearer {token}"})
    answer = connection.getresponse()
    answer.read()
    connection.close()
    assert answer.status == 200, (path, answer.status)
    assert "set-cookie" not in {k.lower() for k, _ in answer.getheaders()}
    return str(answer.getheader("Content-Disposition"))


def _name_in(header: str) -> str:
    """The UTF-8 name of an RFC 6266 header with an ASCII ``filename=`` beside it, both checked safe."""
    from urllib.parse import unquote

    assert header.isascii() and "\r" not in header and "\n" not in header, header
    kind, plain, encoded = header.split("; ")
    assert kind == "attachment" and plain.startswith('filename="') and plain.endswith('"')
    assert '"' not in plain[10:-1] and ";" not in plain and "/" not in plain, plain
    assert encoded.startswith("filename*=UTF-8''") and ";" not in encoded and '"' not in encoded
    return unquote(encoded.removeprefix("filename*=UTF-8''"))


def test_a_sent_file_name_is_kept_as_display_text_and_downloaded_with_a_safe_header(site: Site) -> None:
    """Hostile names through the API and the form of a real server: reduced on receipt, sent back by RFC 6266."""
    from sqlalchemy import update

    from podium.service.tables import submissions

    site.clock.now = NOW + timedelta(days=1)  # a day's own quota
    alpha = site.tokens["alpha"]
    try:
        for sent, kept in HOSTILE_NAMES.items():
            answer = site.live.call("POST", "/api/submissions", alpha, body=site.archive, query={"filename": sent})
            assert answer.status == 201, answer.body
            shown = site.live.call("GET", f"/api/submissions/{answer.body['id']}", alpha).body["filename"]
            assert shown == kept, (sent, shown)
            path = f"/api/submissions/{answer.body['id']}/file"
            assert _name_in(_disposition(site, path, alpha)) == kept
        assert (
            site.live.call(
                "POST", "/api/submissions", alpha, body=site.archive, query={"filename": "x" * 10_000}
            ).status
            == 422
        )
        _log_in(site.ann)  # a session of this day
        boundary, csrf = "podium-form", accounts.csrf_token(site.ann.cookies[COOKIE])
        form = f'--{boundary}\r\nContent-Disposition: form-data; name="csrf"\r\n\r\n{csrf}\r\n'
        long = "\u00e9" * 1_000  # (a part header of 10 kB is refused 400 by the form parser)
        form += f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{long}.tar.gz"\r\n\r\n'
        body = form.encode() + site.archive.read_bytes() + f"\r\n--{boundary}--\r\n".encode()
        headers = {"Content-Type": f"multipart/form-data; boundary={boundary}"}
        assert site.ann.post("/submissions/upload", body, headers) == 303
        newest = site.live.call("GET", "/api/submissions", alpha).body[0]
        assert newest["filename"] == "\u00e9" * 120  # bounded (the form's name was cut at 255 characters first)
        with writing(site.worker.engine) as connection:  # a name stored as sent, before podium 0.11
            connection.execute(update(submissions).where(submissions.c.id == newest["id"]).values(filename='x"\r\n;y'))
        assert _name_in(_disposition(site, f"/api/submissions/{newest['id']}/file", alpha)) == 'x";y'
    finally:
        site.clock.now = NOW


def test_a_method_is_described_only_by_a_member_of_the_team_as_read_under_its_lock(site: Site) -> None:
    """The method's change holds the team's row and reads the caller's membership there: a member the organizers
    took out of the team after their form was read is refused (403), as a selection or a cancel is."""
    submission_id = site.upload("alpha")
    contest = site.service.contests.get()
    method = methods.checked("Small net", None, None, None, False)
    with writing(site.service.engine) as connection:
        ann = accounts.user_row(connection, "ann").id
        team = accounts.team_id(connection, "alpha", None)
        methods.describe(connection, contest, team, submission_id, method, site.clock(), ann)  # ann is alpha's
        accounts.add_user(connection, "cy", "cy-password-1", team, False, site.clock())
        cy = accounts.user_row(connection, "cy").id
        assert accounts.leave(connection, cy, team)  # the organizers take cy out
    with pytest.raises(Refused) as refused, writing(site.service.engine) as connection:
        methods.describe(connection, contest, team, submission_id, method, site.clock(), cy)
    assert refused.value.status == 403 and "you left it, or the organizers moved you" in str(refused.value)


def test_the_list_of_submissions_shows_the_score_teams_are_ranked_by(site: Site) -> None:
    """ILSVRC Task 1's document lists error@1 to error@5 before top5_error: the list shows the ranked score first,
    rounded as the board rounds it (the list showed error@1, error@2 and error@3, never the top-5 error)."""
    from podium.service.titles import title

    submission_id = site.upload("alpha")
    while site.worker.work_once():  # and whatever an earlier test left queued
        pass
    shown = site.live.call("GET", f"/api/submissions/{submission_id}", site.tokens["alpha"]).body["result"]
    scores = shown["scores"] or shown["splits"]["public"]["scores"]
    expected = f"{title('top5_error')} {scores['top5_error']:.4f}, {title('error@1')} {scores['error@1']:.4f}"
    for path in ("/submissions", "/submissions/rows"):
        assert site.ann.get(path) == 200
        row = site.ann.body.decode().split(f">#{submission_id}</a>", 1)[1].split("</tr>", 1)[0]
        assert expected in row and "<small>(public)</small>" in row, row
    site.clock.now = END  # revealed: the team's list shows the private split's scores, as the final board ranks them
    try:
        assert _log_in(site.ann) == 303
        full = site.live.call("GET", f"/api/submissions/{submission_id}", site.tokens["alpha"]).body["result"]
        private = full["splits"]["private"]["scores"]
        assert site.ann.get("/submissions") == 200
        row = site.ann.body.decode().split(f">#{submission_id}</a>", 1)[1].split("</tr>", 1)[0]
        assert f"{title('top5_error')} {private['top5_error']:.4f}" in row and "<small>(private)</small>" in row, row
    finally:
        site.clock.now = NOW


def test_the_list_of_submissions_reads_no_result_document(site: Site) -> None:
    """The list shows three scores a row: it read every row's whole result document (5 MB for ILSVRC Task 1 on
    50,000 images; an organizer's list of 20 took 19 s and 870 MB), and the rows' part again each second while one
    is queued."""
    from sqlalchemy import event

    site.upload("alpha")
    while site.worker.work_once():
        pass
    statements: list[str] = []

    def seen(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        statements.append(statement)

    event.listen(site.service.engine, "before_cursor_execute", seen)
    try:
        for path in ("/submissions", "/submissions/rows"):
            assert site.ann.get(path) == 200 and "top-5 error 0." in site.ann.body.decode()
    finally:
        event.remove(site.service.engine, "before_cursor_execute", seen)
    read = [s for s in statements if "FROM results" in s]
    assert read and not any("document" in s for s in read), read


def test_the_contest_page_says_the_quota_in_words(site: Site) -> None:
    """The rules' quota line read as the summary's keys and Python's booleans: 'per day 20, count failed False'."""
    assert site.ann.get("/") == 200
    page = site.ann.body.decode()
    said = "Quota: 20 a day; rejected and failed submissions are not counted; at most 20 rejected uploads an hour."
    assert said in page and "count failed" not in page and "False" not in page, page


def _numbers(scores: dict[str, Any]) -> set[str]:
    """Each score as a page, a download or the API may write it: rounded to 3, 4 or 6 decimals, or in full."""
    values = [v for v in scores.values() if isinstance(v, float)]
    return {text for v in values for text in (f"{v:.3f}", f"{v:.4f}", f"{v:.6f}", repr(v))}


def _shows(number: str, text: str) -> bool:
    """Whether ``text`` holds ``number`` as a number of its own (0.15 is not in 0.1523)."""
    return re.search(rf"(?<![0-9.]){re.escape(number)}(?![0-9])", text) is not None


def _everything_seen(site: Site, team: str, client: Client) -> dict[str, str]:
    """What ``team`` (its token) and its member's session (``client``) are shown: the API, the pages, their htmx
    fragments, the downloads and the commands, by where."""
    seen: dict[str, str] = {}
    listed = site.live.call("GET", "/api/submissions", site.tokens[team]).body
    seen["GET /api/submissions"] = json.dumps(listed)
    for s in listed:
        seen[f"GET /api/submissions/{s['id']}"] = json.dumps(
            site.live.call("GET", f"/api/submissions/{s['id']}", site.tokens[team]).body
        )
        assert client.get(f"/submissions/{s['id']}") == 200
        seen[f"page /submissions/{s['id']}"] = client.body.decode()
    for path in ("/api/leaderboard", "/api/leaderboard.csv"):
        seen[path] = json.dumps(site.live.call("GET", path, site.tokens[team]).body)
    for path in ("/submissions", "/submissions/rows", "/leaderboard", "/leaderboard/table", "/leaderboard.csv"):
        assert client.get(path) == 200, path
        seen[f"page {path}"] = client.body.decode()
    assert client.get("/leaderboard.json") == 200
    seen["page /leaderboard.json"] = client.body.decode()
    common = ["--server", site.live.url, "--token", site.tokens[team]]
    for args in (["status", *common], ["status", *common, "--json"], ["leaderboard", "--server", site.live.url]):
        got = CliRunner().invoke(cli, args)
        assert got.exit_code == 0, got.output
        seen[" ".join(a for a in args if a not in common)] = got.stdout
    return seen


def test_a_team_sees_no_private_or_whole_test_set_score_before_the_reveal_and_no_other_teams_ever(site: Site) -> None:
    """Before the reveal, nothing alpha is shown (API, pages and their htmx fragments, the board's downloads, podium
    status and leaderboard) holds a score of the private split or of the whole test set, and every list labels its
    scores public; after it, the list shows the private split's, labelled. beta never sees alpha's rows."""
    from sqlalchemy import select

    from podium.service.database import reading
    from podium.service.tables import results

    submission_id = site.scored("alpha")
    with reading(site.service.engine) as connection:
        document = connection.execute(
            select(results.c.document).where(results.c.submission_id == submission_id).order_by(results.c.round)
        ).all()[-1][0]
    public = _numbers(document["splits"]["public"]["scores"])
    hidden = (_numbers(document["splits"]["private"]["scores"]) | _numbers(document["scores"])) - public
    hidden = {text for text in hidden if text.strip("0.") and text.strip("0.") != "1"}  # 0 and 1 are everywhere
    assert hidden, document["splits"]  # the private split and the whole test set score otherwise than the public one
    for where, text in _everything_seen(site, "alpha", site.ann).items():
        assert not [n for n in hidden if _shows(n, text)], f"{where} shows a hidden score before the reveal"
        assert "(private)" not in text and "whole test set" not in text, where
    seen_by_beta = _everything_seen(site, "beta", site.bob)
    rows = [t for w, t in seen_by_beta.items() if "submissions" in w or w.startswith("status")]
    assert not [t for t in rows if f">#{submission_id}</a>" in t or f'"id": {submission_id},' in t], "alpha's row"
    assert site.live.call("GET", f"/api/submissions/{submission_id}", site.tokens["beta"]).status == 404
    assert site.bob.get(f"/submissions/{submission_id}") == 404
    site.clock.now = END
    try:
        assert _log_in(site.ann) == 303
        assert site.ann.get("/submissions/rows") == 200
        row = site.ann.body.decode().split(f">#{submission_id}</a>", 1)[1].split("</tr>", 1)[0]
        private = _numbers(document["splits"]["private"]["scores"])
        assert "<small>(private)</small>" in row and [n for n in private if _shows(n, row)], row
    finally:
        site.clock.now = NOW


def test_a_contest_without_a_split_labels_no_score_public_or_private(tmp_path: Path) -> None:
    """Without a split both of a result's score columns hold the whole test set's: the list labelled them '(public)'
    to a team and '(private)' to its organizers, where the board calls them neither."""
    contest = write_contest(tmp_path / "contest", "ilsvrc2012-cls", extra="")
    clock = Clock(NOW)
    service, tokens = set_up(f"sqlite:///{tmp_path / 'podium.db'}", contest, tmp_path / "data", ("alpha",), clock)
    with writing(service.engine) as connection:
        accounts.add_user(connection, "ann", "ann-password-1", 1, False, clock())
        accounts.add_user(connection, "org", "org-password-1", None, True, clock())
    with LiveServer(service) as live:
        archive = demo_archive(contest, tmp_path / "upload").read_bytes()
        sent = live.call("POST", "/api/submissions", tokens["alpha"], body=archive, query={"filename": "s.tar.gz"})
        assert Worker(service.engine, service.data, clock=clock).work_once()
        scores = live.call("GET", f"/api/submissions/{sent.body['id']}", tokens["alpha"]).body["result"]["scores"]
        for name, password in (("ann", "ann-password-1"), ("org", "org-password-1")):
            client = Client(live.url)
            assert _log_in(client, name, password) == 303
            for path in ("/submissions", "/submissions/rows"):
                assert client.get(path) == 200
                row = client.body.decode().split(f">#{sent.body['id']}</a>", 1)[1].split("</tr>", 1)[0]
                assert f"{scores['top5_error']:.4f}" in row and "<small>" not in row, (name, row)
