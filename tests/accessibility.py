"""Accessibility checks of a page in the browser: axe-core (Deque's rules, the copy in the axe-playwright-python wheel).

:func:`assert_accessible` runs axe on the page as it stands and fails naming
each rule broken, its impact and the first elements that break it. Every
browser test calls it on every page it visits, beside its screenshot.
"""

from __future__ import annotations

from typing import Any

# WCAG 2.1 A and AA, the rules the public sector's law asks for (EN 301 549); axe's "best practice" rules are left out.
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]


def violations(page: Any) -> list[str]:
    """Each axe violation on ``page``: ``rule (impact): help — target, target``."""
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page, options={"runOnly": {"type": "tag", "values": TAGS}, "resultTypes": ["violations"]})
    found = []
    for violation in results.response["violations"]:
        targets = ", ".join(" ".join(node["target"]) for node in violation["nodes"][:3])
        found.append(f"{violation['id']} ({violation['impact']}): {violation['help']} — {targets}")
    return found


def assert_accessible(page: Any, where: str) -> None:
    """Fail if axe finds a WCAG 2.1 A/AA violation on ``page`` (``where`` names the page in the message)."""
    found = violations(page)
    assert not found, f"{where}: {len(found)} accessibility violations:\n" + "\n".join(found)
