"""The accessibility check the browser tests run finds what it should: a page breaking WCAG rules fails it, a plain page passes."""

from __future__ import annotations

from typing import Any

import pytest

from accessibility import assert_accessible, violations
from test_pages_browser import browser  # noqa: F401  (the module's Chromium fixture)


def test_axe_names_each_broken_rule(browser: Any) -> None:  # noqa: F811
    page = browser.new_context(java_script_enabled=False).new_page()  # the pages are walked without JavaScript too
    page.set_content(
        '<html><body><img src="x.png"><input type="text"><p style="color:#777;background:#888">low</p></body></html>'
    )
    rules = {line.split(" ")[0] for line in violations(page)}
    assert rules == {"color-contrast", "document-title", "html-has-lang", "image-alt", "label"}
    with pytest.raises(AssertionError, match="image-alt"):
        assert_accessible(page, "broken")
    page.set_content(
        '<html lang="en"><head><title>t</title></head><body><main><h1>Fine</h1><label for="a">A</label><input id="a"></main></body></html>'
    )
    assert_accessible(page, "plain")
    page.context.close()


HEADERS = {"content-type": "text/html", "content-security-policy": "style-src 'self'"}


def test_a_policy_violation_fails_the_check(browser: Any) -> None:  # noqa: F811
    """An inline style the page's policy refuses is reported by Chromium, with JavaScript off too, and fails the check."""
    html = '<html lang="en"><head><title>t</title></head><body><main><h1 style="color:#000">Styled</h1></main></body></html>'
    for script in (True, False):
        context = browser.new_context(java_script_enabled=script)
        context.route("http://podium.test/", lambda route: route.fulfill(body=html, headers=HEADERS))
        page = context.new_page()
        page.goto("http://podium.test/")
        with pytest.raises(
            AssertionError, match=r"1 Content-Security-Policy violations:\nhttp://podium\.test/: .*style-src"
        ):
            assert_accessible(page, "styled")
        context.close()
