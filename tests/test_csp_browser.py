"""Every chart draws under a Content-Security-Policy without ``'unsafe-eval'``, in Debian's Chromium.

The service's pages with charts (a report, the leaderboard's history, the
organizer's submissions per day) are loaded as ``podium serve`` sends them,
with its header; a static report is opened from a file (offline), under the
policy it carries in a ``<meta>`` tag. On each page no policy is violated, no
error reaches the console, and every chart is an SVG with marks.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from accessibility import assert_accessible
from podium.challenges import IDS, get
from podium.publish.report import render_report
from podium.scoring.engine import evaluate
from podium.service import accounts
from podium.service.client import packed
from podium.service.database import writing
from podium.service.headers import CSP
from podium.service.worker import Worker
from service_helpers import Clock, LiveServer, at, demo_archive, set_up, worse_copy, write_contest
from test_pages_browser import _logged_in, _rendered_charts, browser  # noqa: F401 (a fixture)

WATCH = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", e => window.__violations.push(e.violatedDirective + " " + e.blockedURI));
"""


def _watched(page: object) -> list[str]:
    """The console errors of ``page`` from now on; the policy's violations are kept in the page from its next load."""
    page.context.add_init_script(WATCH)  # type: ignore[attr-defined]
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))  # type: ignore[attr-defined]
    return errors


def _all_drawn(page: object, errors: list[str], charts: int, where: str) -> None:
    marks = _rendered_charts(page)
    violations = page.evaluate("window.__violations")  # type: ignore[attr-defined]
    assert violations == [] and errors == [], (where, violations, errors)
    assert len(marks) == charts and all(m > 0 for m in marks), (where, marks)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A live GlaS contest with two scored submissions of two teams on two days: its URL and folder."""
    tmp = tmp_path_factory.mktemp("csp")
    contest = write_contest(tmp / "contest")
    clock = Clock(at("2026-03-10T12:00:00Z"))
    service, token = set_up(f"sqlite:///{tmp / 'podium.db'}", contest, tmp / "data", ("alpha", "beta"), clock)
    with writing(service.engine) as connection:
        accounts.add_user(connection, "ann", "ann-password-1", 1, False, clock())
        accounts.add_user(connection, "org", "org-password-1", None, True, clock())
    good = demo_archive(contest, tmp / "good")
    (tmp / "worse").mkdir()
    worse = packed(worse_copy(contest.parent / "demo" / "submission", tmp / "worse-folder"), tmp / "worse")
    worker = Worker(service.engine, service.data, clock=clock)
    with LiveServer(service) as live:
        for team, archive in (("beta", worse), ("alpha", good)):
            assert live.call("POST", "/api/submissions", token[team], body=archive).status == 201
            while worker.work_once():
                pass
            clock.now = at("2026-03-11T12:00:00Z")
        yield live.url, tmp
    shutil.rmtree(tmp / "data", ignore_errors=True)


@pytest.mark.parametrize(
    ("user", "path", "charts"), [("ann", "/submissions/2", 4), (None, "/leaderboard", 1), ("org", "/organizer", 1)]
)
def test_the_service_pages_draw_without_eval(
    browser: object,  # noqa: F811
    served: tuple[str, Path],
    user: str | None,
    path: str,
    charts: int,
) -> None:
    url, _ = served
    if user is None:
        page = browser.new_context(viewport={"width": 375, "height": 800}).new_page()  # type: ignore[attr-defined]
    else:
        page = _logged_in(browser, url, user, path)
        page.set_viewport_size({"width": 375, "height": 800})  # type: ignore[attr-defined]
    errors = _watched(page)
    answer = page.goto(url + path)  # type: ignore[attr-defined]
    policy = answer.headers["content-security-policy"]
    assert (
        policy == CSP
        and "unsafe-eval" not in policy
        and "unsafe-inline" not in policy.split("script-src")[1].split(";")[0]
    )
    _all_drawn(page, errors, charts, path)
    assert_accessible(page, f"csp {path}")
    page.context.close()  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each challenge's demo scored and its static report written to a file."""
    folder = tmp_path_factory.mktemp("reports")
    out = {}
    for challenge_id in IDS:
        demo = get(challenge_id).write_demo(folder / challenge_id)
        document = json.loads(evaluate(challenge_id, demo.truth, demo.submission, demo.settings).to_json())
        out[challenge_id] = folder / f"{challenge_id}.html"
        out[challenge_id].write_text(render_report(document, "result.json"), encoding="utf-8")
    return out


@pytest.mark.parametrize("challenge_id", IDS)
def test_a_static_report_draws_offline_under_its_own_policy(
    browser: object,  # noqa: F811
    reports: dict[str, Path],
    challenge_id: str,
) -> None:
    html = reports[challenge_id].read_text(encoding="utf-8")
    policy = html.split('http-equiv="Content-Security-Policy" content="')[1].split('"')[0]
    assert "unsafe-eval" not in policy and "script-src 'sha256-" in policy and "default-src 'none'" in policy
    page = browser.new_context(offline=True).new_page()  # type: ignore[attr-defined]
    errors = _watched(page)
    page.goto(reports[challenge_id].as_uri())  # type: ignore[attr-defined]
    _all_drawn(page, errors, html.count("data-spec='"), challenge_id)
    assert_accessible(page, f"static report {challenge_id}")
    page.context.close()  # type: ignore[attr-defined]


@pytest.mark.parametrize(("user", "path"), [("ann", "/submissions/2"), (None, "/leaderboard"), ("org", "/organizer")])
def test_without_javascript_the_chart_boxes_are_hidden_by_the_stylesheet(
    browser: object,  # noqa: F811
    served: tuple[str, Path],
    user: str | None,
    path: str,
) -> None:
    """The pages once hid the empty chart boxes by a ``<noscript><style>``, which the policy refuses: the stylesheet does it now."""
    url, _ = served
    page = browser.new_context(java_script_enabled=False, viewport={"width": 375, "height": 800}).new_page()  # type: ignore[attr-defined]
    if user is not None:  # the log-in form works without JavaScript
        page.goto(f"{url}/login?next={path}")
        page.fill("#user", user)
        page.fill("#password", f"{user}-password-1")
        page.click("form.stack button")
    page.goto(url + path)
    charts = page.locator("div.vega")
    assert charts.count() > 0 and not any(charts.nth(i).is_visible() for i in range(charts.count())), path
    assert_accessible(page, f"csp without javascript {path}")
    page.context.close()


def test_the_api_documentation_page_takes_its_style_from_the_site(browser: object, served: tuple[str, Path]) -> None:  # noqa: F811
    url, _ = served
    page = browser.new_context(java_script_enabled=False).new_page()  # type: ignore[attr-defined]
    loaded: list[tuple[str, int]] = []
    page.on("response", lambda response: loaded.append((response.url, response.status)))
    answer = page.goto(url + "/docs")
    assert answer is not None and answer.status == 200 and answer.headers["content-security-policy"] == CSP
    assert (url + "/static/docs.css", 200) in loaded, loaded
    assert_accessible(page, "csp /docs")
    page.context.close()
