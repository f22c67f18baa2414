"""Waiting in a page until a JavaScript expression holds, under the pages' Content-Security-Policy.

Playwright's ``wait_for_function`` polls with a predicate compiled in the page
(``eval``), which the policy forbids (no ``'unsafe-eval'``: the first check
passes, a second one fails with an ``EvalError``); ``page.evaluate`` comes
through the browser's debugging protocol, which the policy does not govern.
"""

from __future__ import annotations

import time
from typing import Any


def wait_until(page: Any, expression: str, timeout: float = 30_000) -> None:
    """Evaluate ``expression`` in ``page`` every 50 ms until it is truthy; fail after ``timeout`` milliseconds."""
    deadline = time.monotonic() + timeout / 1000
    while not page.evaluate(expression):
        if time.monotonic() > deadline:
            raise AssertionError(f"not true within {timeout / 1000:g} s: {expression}")
        page.wait_for_timeout(50)
