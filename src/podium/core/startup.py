"""A command's start-up: its modules imported with the cyclic garbage collector paused, and then frozen.

Importing click and podium's modules makes tens of thousands of objects that live as long as the
process (modules, classes, functions), and the collector traverses them again and again as they
are made, and once more when the process ends: about 10 ms of the CPU of ``podium evaluate`` on
ILSVRC Task 1 (26 young and 3 middle collections, and the last full one at exit, 5 ms of its
own, which found nothing to collect; ``gc.callbacks``). The command's entry point
(:func:`podium.cli.main`, never an import of podium) calls :func:`command_started`: from then on
what :func:`collector_paused` imports is frozen (``gc.freeze``: no collection traverses it again),
and the collector runs as before on everything the command makes.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

_freezing = False


def command_started() -> None:
    """Called by the ``podium`` command's entry point, once: freeze what start-up made, and what
    :func:`collector_paused` imports from now on."""
    global _freezing
    _freezing = True
    gc.freeze()


@contextmanager
def collector_paused() -> Iterator[None]:
    """Within it, no cyclic garbage collection (imports only: nothing long or large runs inside); on leaving, what it
    made is frozen in the command (:func:`command_started`), and the collector enabled again if it was on entering.

    >>> with collector_paused():
    ...     gc.isenabled()
    False
    >>> gc.isenabled()
    True
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if _freezing:
            gc.freeze()
        if enabled:
            gc.enable()
