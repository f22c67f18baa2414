"""Accessibility checks of a page in the browser: axe-core (Deque's rules, the copy in the axe-playwright-python wheel).

:func:`assert_accessible` runs axe on the page as it stands and fails naming
each rule broken, its impact and the first elements that break it; it fails
too on any Content-Security-Policy violation the page's context reported
(:mod:`page_policy`: an inline style the policy refuses). Every browser test
calls it on every page it visits, beside its screenshot.
"""

from __future__ import annotations

from html import escape
from typing import Any

import page_policy

# WCAG 2.1 A and AA, the rules the public sector's law asks for (EN 301 549); axe's "best practice" rules are left out.
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]


def violations(page: Any) -> list[str]:
    """Each axe violation on ``page``: ``rule (impact): help — target, target``.

    axe runs in a copy of the page as it stands (its HTML, with its address as
    the base of its links and styles) in a context of its own with JavaScript
    on: the pages are walked without JavaScript too, where Playwright's
    ``evaluate`` would wait for ever.
    """
    from axe_playwright_python.sync_playwright import Axe

    html = page.content().replace("<head>", f'<head><base href="{escape(page.url)}">', 1)
    context = page.context.browser.new_context(viewport=page.viewport_size, java_script_enabled=True)
    try:
        copy = context.new_page()
        copy.set_content(html, wait_until="load")
        options = {"runOnly": {"type": "tag", "values": TAGS}, "resultTypes": ["violations"]}
        results = Axe().run(copy, options=options)
    finally:
        context.close()
    found = []
    for violation in results.response["violations"]:
        targets = ", ".join(" ".join(node["target"]) for node in violation["nodes"][:3])
        found.append(f"{violation['id']} ({violation['impact']}): {violation['help']} — {targets}")
    return found


def assert_accessible(page: Any, where: str) -> None:
    """Fail if the page's context reported a policy violation, or axe finds a WCAG 2.1 A/AA violation on ``page`` (``where`` names the page in the message)."""
    refused = page_policy.violations(page)
    assert not refused, f"{where}: {len(refused)} Content-Security-Policy violations:\n" + "\n".join(refused)
    found = violations(page)
    assert not found, f"{where}: {len(found)} accessibility violations:\n" + "\n".join(found)
