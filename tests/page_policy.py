"""The Content-Security-Policy violations a page reports, kept for every page a browser test opens.

Chromium reports each violation to the page's console (an inline ``style``
attribute or ``<style>`` element the policy refuses, a script, an image from
elsewhere), with JavaScript on or off; a ``securitypolicyviolation`` event
would need a script in the page, which the pages walked without JavaScript
cannot run. :func:`watch` makes every context of a browser keep those
messages; :func:`accessibility.assert_accessible`, called on every page a
browser test visits, fails on any.
"""

from __future__ import annotations

from typing import Any

REPORTED = "Content Security Policy"  # in each of Chromium's messages about the policy: "... violates the following Content Security Policy directive ..."


def watch(browser: Any) -> Any:
    """``browser``, whose every new context (and the one ``new_page`` makes) keeps its pages' policy violations (:func:`violations`)."""
    opened = browser.new_context

    def new_context(**options: Any) -> Any:
        context = opened(**options)
        seen: list[str] = []
        context.policy_violations = seen
        context.on(
            "console",
            lambda message: (
                seen.append(f"{message.location.get('url')}: {message.text}") if REPORTED in message.text else None
            ),
        )
        return context

    browser.new_context = new_context
    browser.new_page = lambda **options: new_context(
        **options
    ).new_page()  # a page in a context of its own, watched too
    return browser


def violations(page: Any) -> list[str]:
    """The policy violations reported in ``page``'s context so far; an error if its browser is not watched."""
    seen = getattr(page.context, "policy_violations", None)
    if seen is None:
        raise AssertionError(
            "the browser was not opened by test_pages_browser.launch: its policy violations are not watched"
        )
    return list(seen)
