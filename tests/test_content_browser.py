"""The demo contest's content pages in Chromium: contest page, every content page, the data page, the kit downloaded.

At 375 px wide, moving by the keyboard only (a link focused, then Enter), each
page checked by axe-core and screenshot to ``test-artifacts/pages``.
"""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

from browser_wait import wait_until
from podium.challenges import get
from service_helpers import Clock, LiveServer, at, set_up
from test_pages_browser import _shot, browser  # noqa: F401  (the module's Chromium)

EXAMPLE = Path(__file__).parent.parent / "examples" / "contests" / "demo"


def _by_keyboard(page: object, selector: str) -> None:
    """Follow the link ``selector`` as a keyboard user does: focused, then Enter."""
    page.focus(selector)  # type: ignore[attr-defined]
    with page.expect_navigation():  # type: ignore[attr-defined]
        page.keyboard.press("Enter")  # type: ignore[attr-defined]


def test_the_demo_contest_pages_data_and_kit_in_chromium(browser: object, tmp_path: Path) -> None:  # noqa: F811
    folder = tmp_path / "examples" / "contests" / "demo"
    shutil.copytree(EXAMPLE, folder)  # as make demo leaves a checkout: demo-data/ three levels up
    with open(folder / "pages" / "evaluation.md", "a", encoding="utf-8") as page:  # columns aligned, as organizers do
        page.write("\n| set | images |\n| :-- | --: |\n| test | 6 |\n")
    get("glas").write_demo(tmp_path / "demo-data" / "glas")
    clock = Clock(at("2026-03-10T12:00:00Z"))
    service, _ = set_up(f"sqlite:///{tmp_path / 'podium.db'}", folder / "contest.toml", tmp_path / "data", (), clock)
    with LiveServer(service) as live:
        context = browser.new_context(viewport={"width": 375, "height": 800}, accept_downloads=True)  # type: ignore[attr-defined]
        page = context.new_page()
        page.goto(live.url + "/")
        tabs = page.eval_on_selector_all("nav.tabs a", "links => links.map(a => a.textContent)")
        assert tabs == ["Contest", "Overview", "Evaluation", "FAQ", "Data", "Terms"]
        assert page.get_attribute("main a[download]", "href") == "/data/kit.zip"  # the contest page links the kit
        _shot(page, "content-contest")
        for name, title in (
            ("overview", "Gland segmentation on a demo set"),
            ("evaluation", "Evaluation"),
            ("faq", "Frequently asked questions"),
        ):
            _by_keyboard(page, f"nav.tabs a[href='/pages/{name}']")
            assert page.url == f"{live.url}/pages/{name}" and page.inner_text("h1") == title
            assert page.get_attribute(f"nav.tabs a[href='/pages/{name}']", "aria-current") == "page"
            assert page.evaluate("document.documentElement.scrollWidth") <= 375 + 1
            _shot(page, f"content-{name}")  # no policy violation: an aligned column is a class, not a style attribute
        _by_keyboard(page, "nav.tabs a[href='/pages/evaluation']")
        aligned = "[...document.querySelectorAll('.prose table')].pop().querySelectorAll('td')"
        assert page.evaluate(f"[...{aligned}].map(td => getComputedStyle(td).textAlign)") == ["left", "right"]
        _by_keyboard(page, "nav.tabs a[href='/pages/overview']")
        wait_until(page, "document.querySelector('.prose img').complete", timeout=20_000)  # loaded (lazily)
        assert page.evaluate("document.querySelector('.prose img').naturalWidth") == 194  # the public figure, shown
        _by_keyboard(page, "nav.tabs a[href='/data']")
        assert page.inner_text("h1") == "Data" and "podium evaluate --contest contest.toml" in page.inner_text("main")
        assert page.evaluate("document.documentElement.scrollWidth") <= 375 + 1
        _shot(page, "content-data")
        with page.expect_download() as download:
            page.focus("a[href='/data/kit.zip']")
            page.keyboard.press("Enter")
        saved = tmp_path / "kit.zip"
        download.value.save_as(saved)
        assert download.value.suggested_filename == "glas-demo-kit.zip"
        with zipfile.ZipFile(saved) as archive:
            assert "glas-demo-kit/README.md" in archive.namelist()
        _by_keyboard(page, "nav.tabs a[href='/terms']")
        assert "Terms" in page.inner_text("h1")
        _shot(page, "content-terms")
        context.close()
