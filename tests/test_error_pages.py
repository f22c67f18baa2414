"""A page's failure is an HTML page with the site's navigation and nothing of the failure; the API's stays JSON."""

from __future__ import annotations

import urllib.error
import urllib.request
from pathlib import Path

import pytest

from podium.service import pages
from service_helpers import Clock, LiveServer, at, set_up, write_contest


def _page(url: str) -> tuple[int, str, str]:
    """(status, content type, body) of a page as a browser asks for it."""
    try:
        with urllib.request.urlopen(
            urllib.request.Request(url, headers={"Accept": "text/html,*/*;q=0.8"}), timeout=30
        ) as answer:
            return answer.status, answer.headers["content-type"], answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers["content-type"], error.read().decode()


def test_a_500_of_a_page_is_the_sites_page_without_the_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    contest = write_contest(tmp_path / "contest", extra="")
    service, token = set_up(
        f"sqlite:///{tmp_path / 'podium.db'}", contest, tmp_path / "data", ("alpha",), Clock(at("2026-03-10T12:00:00Z"))
    )

    def broken(*_: object) -> None:
        raise RuntimeError("secret detail /srv/truth")

    monkeypatch.setattr(pages, "board_page_values", broken)
    with LiveServer(service) as live:
        status, kind, page = _page(live.url + "/leaderboard")
        missing = _page(live.url + "/no-such-page")
        unparsed = _page(
            live.url + "/submissions/abc"
        )  # a path parameter that is no number: no such page (it was FastAPI's 422 JSON)
        api_unparsed = live.call("GET", "/api/submissions/abc", token["alpha"])
        api_missing = live.call("GET", "/api/submissions/1", "pdm_unknown")
    assert (
        status == 500
        and kind.startswith("text/html")
        and '<nav aria-label="main">' in page
        and "<h1>500 Internal Server Error</h1>" in page
    )
    assert "secret detail" not in page and "Traceback" not in page
    assert missing[0] == 404 and missing[1].startswith("text/html") and "<h1>404 Not Found</h1>" in missing[2]
    assert unparsed[0] == 404 and unparsed[1].startswith("text/html") and '<nav aria-label="main">' in unparsed[2]
    assert api_unparsed.status == 422 and api_unparsed.body["detail"][0]["loc"] == ["path", "submission_id"]
    assert api_missing.status == 401 and api_missing.body == {"detail": "unknown or expired token"}
