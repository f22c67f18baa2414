"""Content pages, the data page and starting kits: the contest file's [pages], [data] and [kit], checked, served and scored.

The pages are served by a real uvicorn (one server for the module); the
kit's score is compared with the one a real ``podium serve`` gives the same
baseline over the kit's own contest file.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conftest import run
from podium.service.markdown import render_file, safe_link
from served import Serve, podium
from service_helpers import Clock, LiveServer, at, set_up, write_contest

HOSTILE = """\
# Hostile

<script>alert("raw")</script>
<img src=x onerror=alert(1)>
<iframe src="https://evil.example/"></iframe>
<a href="javascript:alert(2)">raw anchor</a>

[plain js](javascript:alert(3)) [cased](JaVaScRiPt:alert(4)) [entity](javascript&colon;alert(5))
[spaced]( javascript:alert(6)) [vb](vbscript:msgbox(7)) [file](file:///etc/passwd)
[data link](data:text/html;base64,PHNjcmlwdD5hbGVydCg4KTwvc2NyaXB0Pg==)
<javascript:alert(9)> [ref][evil]

![data image](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==)
![foreign image](https://evil.example/track.png)
![absolute](/etc/passwd) ![outside](../../etc/passwd) ![the truth](demo/truth/testA_1_anno.png)
![public](public/figure.png)

[ok](https://example.org/a) [mail](mailto:org@example.org) [relative](faq)

| a | table |
| --- | --- |
| <b>bold?</b> | [cell](javascript:alert(11)) |

[evil]: javascript:alert(10)
"""


class Tags(HTMLParser):
    """Every tag and attribute of a rendered page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def tags_of(html: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = Tags()
    parser.feed(html)
    return parser.tags


def assert_inert(html: str, public_image: str | None) -> None:
    """No script, frame, handler, foreign or data image, and no link but http(s), mailto and relative ones."""
    tags = tags_of(html)
    assert {tag for tag, _ in tags} <= {"h1", "h2", "p", "a", "img", "span", "code", "pre", "table", "thead", "tbody", "tr", "th", "td", "strong", "em", "ul", "li"}, tags  # fmt: skip
    for tag, attrs in tags:
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
        if tag == "a":
            href = attrs["href"] or ""
            assert re.match(r"(https?:|mailto:|[^:]*$)", href), href
        if tag == "img":
            assert attrs["src"] == public_image, attrs
    assert [a["src"] for t, a in tags if t == "img"] == ([public_image] if public_image else [])
    assert sum(t == "a" and (a["href"] or "").startswith("https://example.org") for t, a in tags) == 1
    assert any(t == "a" and a["href"] == "faq" for t, a in tags) and any(t == "table" for t, _ in tags)


def test_hostile_markdown_renders_inert(tmp_path: Path) -> None:
    page = tmp_path / "pages" / "hostile.md"
    page.parent.mkdir()
    page.write_text(HOSTILE)
    public = {"pages/public/figure.png": "/data/files/pages/public/figure.png"}
    assert_inert(render_file(page, tmp_path, public), "/data/files/pages/public/figure.png")
    assert_inert(render_file(page, tmp_path, {}), None)  # the terms: no public image named


@pytest.mark.parametrize(
    ("url", "kept"),
    [
        ("https://a.example/x", True),
        ("mailto:a@example.org", True),
        ("faq", True),
        ("../data#files", True),
        ("javascript:alert(1)", False),
        (" JAVASCRIPT:alert(1)", False),
        ("data:text/html,x", False),
        ("vbscript:x", False),
        ("file:///etc/passwd", False),
    ],
)
def test_links_keep_http_mailto_and_relative_addresses_only(url: str, kept: bool) -> None:
    assert safe_link(url) is kept


def test_a_page_is_rendered_once_for_each_change_of_its_file(tmp_path: Path) -> None:
    page = tmp_path / "faq.md"
    page.write_text("first")
    assert "first" in render_file(page, tmp_path, {})
    page.write_text("second, longer")  # another size: a new key even within one mtime tick
    assert "second" in render_file(page, tmp_path, {})
    from podium.service.markdown import _rendered

    hits = _rendered.cache_info().hits
    render_file(page, tmp_path, {})
    assert _rendered.cache_info().hits == hits + 1


# --- contest check -----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def contest_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A GlaS contest on the demo set (its truth in ``demo/truth``), with pages, a public file and a kit beside it."""
    folder = tmp_path_factory.mktemp("content")
    contest = write_contest(folder, extra='[parameters]\nparts = ["testB"]\n\n[split]\npublic = 0.5\nseed = 7\n')
    contest.write_text(
        contest.read_text().replace(str(folder / "demo" / "truth"), "demo/truth").replace("2026-06-01", "2099-01-01")
    )
    (folder / "pages").mkdir()
    (folder / "pages" / "overview.md").write_text(
        "# Welcome\n\nSee [the FAQ](faq) and ![a figure](../public/figure.png).\n"
    )
    (folder / "pages" / "faq.md").write_text("**Q?** A.\n")
    (folder / "pages" / "data.md").write_text("The data of the contest.\n")
    (folder / "pages" / "hostile.md").write_text(HOSTILE)
    (folder / "public").mkdir()
    (folder / "public" / "figure.png").write_bytes((folder / "demo" / "truth" / "testA_1_anno.png").read_bytes())
    (folder / "public" / "big.bin").write_bytes(bytes(range(256)) * 4096)  # 1 MiB
    kit = folder / "kit"
    for name, target in (("truth", "testB_9_anno.png"), ("submission", "testB_9_seg.png")):
        (kit / name).mkdir(parents=True)
        shutil.copy(
            folder / "demo" / name / ("testB_2_anno.png" if name == "truth" else "testB_2_seg.png"), kit / name / target
        )
    (folder / "demo" / "secret.txt").write_text("the truth's folder")
    (folder.parent / "outside.txt").write_text("outside the contest folder")
    return folder


CONTENT = """
[pages]
overview = "pages/overview.md"
faq = "pages/faq.md"
data = "pages/data.md"
hostile = "pages/hostile.md"

[data]
files = ["public/figure.png", "public/big.bin"]
links = [{ title = "The full set", url = "https://example.org/full.zip", bytes = 123456789 }]

[kit]
truth = "kit/truth"
submission = "kit/submission"
"""


def with_content(folder: Path, content: str = CONTENT, name: str = "contest.toml") -> Path:
    path = folder / name
    path.write_text((folder / "contest.toml").read_text().split("\n[pages]")[0] + content)
    return path


def test_a_contest_with_pages_data_and_a_kit_is_summarized(contest_folder: Path) -> None:
    path = with_content(contest_folder, name="full.toml")
    code, output = run("contest", "check", str(path))
    assert code == 0, output
    assert "pages: overview, faq, data, hostile" in output and "data: 2 files, 1 link" in output
    assert "kit of test-glas: 1 sample items" in output
    linked = contest_folder.parent / "linked-checkout"  # the contest's folder itself reached through a link: fine
    linked.symlink_to(contest_folder)
    code, output = run("contest", "check", str(linked / "full.toml"))
    assert code == 0, output


BAD = [  # (what replaces what in CONTENT, the line's marker, the message's fragment)
    ('faq = "pages/faq.md"', 'faq = "pages/missing.md"', "pages.faq: no file 'pages/missing.md'"),
    ('faq = "pages/faq.md"', 'Bad_Id = "pages/faq.md"', "page id pages.Bad_Id: 1 to 32 lower-case letters"),
    ('faq = "pages/faq.md"', 'terms = "pages/faq.md"', "the terms are [service] terms"),
    ('faq = "pages/faq.md"', 'faq = "/etc/hostname"', "must be a file in the contest file's folder"),
    ('"public/big.bin"]', '"../outside.txt"]', "must be a file in the contest file's folder"),
    ('"public/big.bin"]', '"demo/truth/testA_1_anno.png"]', "is (or holds, or is in) the truth"),
    ('"public/big.bin"]', '"demo/truth/../secret.txt"]', "named without '..' or a symbolic link"),
    ('"public/big.bin"]', '"public/figure.png"]', "'public/figure.png' is listed twice"),
    ('"public/big.bin"]', '"public/link.png"]', "named without '..' or a symbolic link"),
    ('url = "https://example.org/full.zip"', 'url = "javascript:alert(1)"', "must be an http or https URL"),
    ('truth = "kit/truth"', 'truth = "demo/truth"', "kit.truth = 'demo/truth' is (or holds, or is in) the truth"),
    ('truth = "kit/truth"', 'truth = "kit/leaky"', "kit.truth: 1 of its 2 sample items are in the test set (testA_1)"),
    ('submission = "kit/submission"', 'submission = "kit/none"', "kit.submission: no path 'kit/none'"),
]


@pytest.mark.parametrize(("old", "new", "fragment"), BAD)
def test_contest_check_names_each_bad_page_file_link_and_kit_with_its_line(
    contest_folder: Path, old: str, new: str, fragment: str
) -> None:
    leaky = contest_folder / "kit" / "leaky"
    if not leaky.exists():
        leaky.mkdir()
        shutil.copy(contest_folder / "demo" / "truth" / "testA_1_anno.png", leaky)
        shutil.copy(contest_folder / "kit" / "truth" / "testB_9_anno.png", leaky)
        (contest_folder / "public" / "link.png").symlink_to(contest_folder / "demo" / "truth" / "testA_1_anno.png")
    content = CONTENT.replace(old, new, 1)
    path = with_content(contest_folder, content, name="bad.toml")
    code, output = run("contest", "check", str(path))
    line = max(i for i, text in enumerate(path.read_text().splitlines(), start=1) if new in text)  # the [kit]'s, below
    assert code == 2 and "Traceback" not in output, output
    assert any(f"bad.toml:{line}: " in row and fragment in row for row in output.splitlines()), (line, output)


def test_a_page_that_is_not_utf8_is_named(contest_folder: Path) -> None:
    (contest_folder / "pages" / "latin1.md").write_bytes("café".encode("latin-1"))
    path = with_content(contest_folder, CONTENT.replace("pages/faq.md", "pages/latin1.md"), name="latin.toml")
    code, output = run("contest", "check", str(path))
    assert code == 2 and "pages.faq: 'pages/latin1.md' is not UTF-8 text (byte 3)" in output, output
    (contest_folder / "pages" / "long.md").write_text("x" * (256 * 1024 + 1))
    path.write_text(path.read_text().replace("pages/latin1.md", "pages/long.md"))
    code, output = run("contest", "check", str(path))
    assert code == 2 and "'pages/long.md' is 262,145 bytes; a page holds at most 262,144" in output, output


# --- the served pages and downloads ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server(contest_folder: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    path = with_content(contest_folder, 'terms = "pages/hostile.md"\n' + CONTENT, name="served.toml")
    folder = tmp_path_factory.mktemp("served")
    service, _ = set_up(
        f"sqlite:///{folder / 'podium.db'}", path, folder / "data", ("alpha",), Clock(at("2026-03-10T12:00:00Z"))
    )
    with LiveServer(service) as live:
        yield live


def raw_get(server: LiveServer, path: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    """A GET of ``path`` sent exactly as written (no client normalizes ``..`` or decodes ``%2F``)."""
    host, port = server.url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        connection.putrequest("GET", path, skip_accept_encoding=True)
        for name, value in (headers or {}).items():
            connection.putheader(name, value)
        connection.endheaders()
        answer = connection.getresponse()
        return answer.status, {k.lower(): v for k, v in answer.getheaders()}, answer.read()
    finally:
        connection.close()


def test_each_page_is_served_inert_with_the_nav(server: LiveServer, contest_folder: Path) -> None:
    status, _, body = raw_get(server, "/pages/hostile")
    html = body.decode()
    assert status == 200
    prose = html.split('<div class="prose">')[1].split("</div>")[0]
    assert_inert(prose, None)  # public/figure.png is listed, but the hostile page names pages/public/figure.png
    nav = html.split('aria-label="contest pages"')[1].split("</nav>")[0]
    assert re.findall(r'href="([^"]+)"', nav) == [
        "/",
        "/pages/overview",
        "/pages/faq",
        "/pages/hostile",
        "/data",
        "/terms",
    ]
    status, _, body = raw_get(server, "/pages/overview")
    assert status == 200 and '<img src="/data/files/public/figure.png"' in body.decode()
    assert body.decode().count("<h1>") == 1  # the page's own heading is its title
    assert raw_get(server, "/pages/data")[0] == 308 and raw_get(server, "/pages/nothing")[0] == 404
    pages = json.loads(raw_get(server, "/api/pages")[2])
    assert [p["id"] for p in pages] == ["overview", "faq", "data", "hostile"] and pages[2]["url"] == "/data"


def test_the_terms_are_rendered_inert_too(server: LiveServer) -> None:
    """The terms page (sign-up's) shares the renderer: before it, a data: image and raw links of other schemes passed."""
    status, _, body = raw_get(server, "/terms")
    assert status == 200
    assert_inert(body.decode().split('<div class="prose">')[1].split("</div>")[0], None)


def test_the_data_page_lists_files_with_their_size_and_sha256(server: LiveServer, contest_folder: Path) -> None:
    status, _, body = raw_get(server, "/data")
    assert status == 200
    html = body.decode()
    digest = hashlib.sha256((contest_folder / "public" / "big.bin").read_bytes()).hexdigest()
    assert digest in html and "1,048,576" in html and "The data of the contest." in html
    assert "https://example.org/full.zip" in html and "123,456,789 bytes" in html
    listed = json.loads(raw_get(server, "/api/data")[2])
    assert [f["name"] for f in listed["files"]] == ["public/figure.png", "public/big.bin"]
    assert listed["files"][1] == {
        "name": "public/big.bin",
        "bytes": 1 << 20,
        "sha256": digest,
        "url": "/data/files/public/big.bin",
    }
    (kit,) = listed["kits"]
    assert (
        kit["url"] == "/data/kit.zip"
        and kit["command"] == "podium evaluate --contest contest.toml --submission baseline/"
    )


def test_a_public_file_downloads_as_an_attachment_with_ranges(server: LiveServer, contest_folder: Path) -> None:
    status, headers, body = raw_get(server, "/data/files/public/big.bin")
    assert status == 200 and body == (contest_folder / "public" / "big.bin").read_bytes()
    assert headers["content-disposition"] == "attachment; filename=\"big.bin\"; filename*=UTF-8''big.bin"
    assert headers["content-type"] == "application/octet-stream" and headers["x-content-type-options"] == "nosniff"
    status, headers, body = raw_get(server, "/data/files/public/big.bin", {"Range": "bytes=1000-1999"})
    assert (
        status == 206
        and body == (bytes(range(256)) * 4096)[1000:2000]
        and headers["content-range"] == f"bytes 1000-1999/{1 << 20}"
    )
    status, headers, _ = raw_get(server, "/data/files/public/figure.png")
    assert status == 200 and headers["content-type"] == "image/png"  # a page's <img> shows it


@pytest.mark.parametrize(
    "path",
    [
        "/data/files/../served.toml",
        "/data/files/public/../served.toml",
        "/data/files/%2e%2e/served.toml",
        "/data/files/public%2F..%2F..%2Fserved.toml",
        "/data/files//etc/passwd",
        "/data/files/%2Fetc%2Fpasswd",
        "/data/files/demo/truth/testA_1_anno.png",
        "/data/files/public/link.png",
        "/data/files/public\\..\\served.toml",
        "/data/files/public/figure.png/",
        "/data/files/public/figure.png%00",
        "/data/files/PUBLIC/figure.png",
        "/pages/..%2f..%2fserved.toml",
        "/pages/%2e%2e",
    ],
)
def test_nothing_but_the_listed_files_is_served(server: LiveServer, path: str) -> None:
    status, _, body = raw_get(server, path)
    assert status in (400, 404), (status, body[:200])
    assert b"the truth" not in body and b"[[phase]]" not in body


def test_a_listed_file_replaced_by_a_link_after_the_check_is_refused(server: LiveServer, contest_folder: Path) -> None:
    figure = contest_folder / "public" / "figure.png"
    kept = figure.read_bytes()
    figure.unlink()
    figure.symlink_to(contest_folder / "demo" / "truth" / "testA_1_anno.png")
    try:
        assert raw_get(server, "/data/files/public/figure.png")[0] == 404
        status, _, body = raw_get(server, "/data")
        assert status == 200 and b"public/figure.png" not in body and b"public/big.bin" in body  # no longer offered
    finally:
        figure.unlink()
        figure.write_bytes(kept)


# --- the starting kit: its score is the server's ----------------------------------------------------------------


def test_the_kit_scores_its_baseline_as_a_served_contest_does(
    server: LiveServer, contest_folder: Path, tmp_path: Path
) -> None:
    status, headers, body = raw_get(server, "/data/kit.zip")
    assert (
        status == 200
        and headers["content-disposition"]
        == "attachment; filename=\"test-glas-kit.zip\"; filename*=UTF-8''test-glas-kit.zip"
    )
    built = podium("kit", "build", str(contest_folder / "served.toml"), str(tmp_path / "kit.zip"))
    assert built.returncode == 0, built.stderr
    assert (tmp_path / "kit.zip").read_bytes() == body  # the same bytes, built by the command and by the server
    with zipfile.ZipFile(tmp_path / "kit.zip") as archive:
        assert sorted(archive.namelist()) == [
            "test-glas-kit/README.md",
            "test-glas-kit/baseline/testB_9_seg.png",
            "test-glas-kit/contest.toml",
            "test-glas-kit/truth/testB_9_anno.png",
        ]
        archive.extractall(tmp_path)
    kit = tmp_path / "test-glas-kit"
    printed = re.search(r"^    (podium evaluate .+)$", (kit / "README.md").read_text(), re.M)
    assert printed is not None and printed.group(1) in built.stdout
    local = subprocess.run(
        [sys.executable, "-m", *printed.group(1).split(), "--json", "-"],
        cwd=kit,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert local.returncode == 0, local.stderr
    local_scores = json.loads(local.stdout)["scores"]

    with Serve(kit / "contest.toml", tmp_path / "served", None, "--team", "kit") as serve:
        token = re.search(r"--token (\S+)", serve.output())  # the banner's command for the team
        assert token is not None, serve.output()
        sent = podium(
            "submit", "--server", serve.url, "--token", token.group(1), "--wait", "90", "--json", str(kit / "baseline")
        )
        assert sent.returncode == 0, sent.stdout + sent.stderr
        served_scores = json.loads(sent.stdout)["result"]["scores"]
    assert served_scores == local_scores and set(local_scores) >= {"f1", "object_dice", "object_hausdorff", "f1/testB"}
    assert local_scores["f1/testB"] == local_scores["f1"] and "f1/testA" not in local_scores  # the parameters, as set
    assert f"f1={local_scores['f1']}" in built.stdout  # podium kit build scored its kit the same way


def test_a_kit_that_does_not_score_is_refused(contest_folder: Path, tmp_path: Path) -> None:
    """A part of the contest's ``parts`` with no sample item: the kit's command would fail, so podium kit build says so."""
    path = with_content(contest_folder, name="parts.toml")
    path.write_text(path.read_text().replace('parts = ["testB"]', 'parts = ["testA", "testB"]'))
    built = podium("kit", "build", str(path), str(tmp_path / "kit.zip"))
    assert built.returncode == 2 and "the kit does not score: part 'testA' matches no image" in built.stderr, (
        built.stderr
    )
    assert not (tmp_path / "kit.zip").exists()
    code, output = run("contest", "check", str(path))  # the check builds and tries each kit too
    assert code == 2 and "the kit does not score: part 'testA' matches no image" in output, output


def test_a_track_offers_its_own_kit(contest_folder: Path, tmp_path: Path) -> None:
    """``[track.kit]``: built for that track (--track), refused for another, and ``[kit]`` at the top of a contest of tracks is refused."""
    text = (contest_folder / "contest.toml").read_text().split("\n[pages]")[0]
    tracks = '\n[[track]]\nid = "a"\ntitle = "Track A"\n\n[[track]]\nid = "b"\ntitle = "Track B"\n[track.kit]\ntruth = "kit/truth"\nsubmission = "kit/submission"\n'
    path = contest_folder / "tracks.toml"
    path.write_text(text + tracks)
    built = podium("kit", "build", str(path), str(tmp_path / "b.zip"), "--track", "b")
    assert built.returncode == 0 and "test-glas-b-kit/" in built.stdout, built.stdout + built.stderr
    assert "test-glas-b-kit/contest.toml" in zipfile.ZipFile(tmp_path / "b.zip").namelist()
    refused = podium("kit", "build", str(path), str(tmp_path / "a.zip"), "--track", "a")
    assert refused.returncode == 2 and "track a has no starting kit" in refused.stderr, refused.stderr
    path.write_text(text + '\n[kit]\ntruth = "kit/truth"\nsubmission = "kit/submission"\n' + tracks)
    code, output = run("contest", "check", str(path))
    line = path.read_text().splitlines().index("[kit]") + 1
    assert code == 2 and f"tracks.toml:{line}: [kit] at the top is for a contest without tracks" in output, output


def test_the_server_does_not_offer_a_kit_that_does_not_score(contest_folder: Path, tmp_path: Path) -> None:
    path = with_content(contest_folder, name="parts-served.toml")
    path.write_text(path.read_text().replace('parts = ["testB"]', 'parts = ["testA", "testB"]'))
    service, _ = set_up(
        f"sqlite:///{tmp_path / 'podium.db'}", path, tmp_path / "data", (), Clock(at("2026-03-10T12:00:00Z"))
    )
    with LiveServer(service) as live:
        status, _, body = raw_get(live, "/data")
        assert status == 200 and b"public/big.bin" in body and b"kit.zip" not in body
        status, _, body = raw_get(live, "/data/kit.zip")
        assert status == 404 and b"the kit does not score" in body
    assert not list((tmp_path / "data" / "kits").glob("*.zip"))
