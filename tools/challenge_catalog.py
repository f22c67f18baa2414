"""Write ``src/podium/challenges/catalog.json`` from the real challenge classes (run it after a challenge's
title, rules, scores or parameters change; ``tests/test_startup.py`` fails until it is run).

    .venv/bin/python tools/challenge_catalog.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from podium.challenges import every
from podium.challenges.catalog import FILE, describe

TARGET = Path(__file__).resolve().parent.parent / "src" / "podium" / "challenges" / FILE


def text() -> str:
    """The catalog as the classes say it."""
    return json.dumps([describe(challenge) for challenge in every()], indent=1, ensure_ascii=False) + "\n"


def main() -> int:
    TARGET.write_text(text(), encoding="utf-8")
    print(f"{TARGET}: {len(every())} challenges")
    return 0


if __name__ == "__main__":
    sys.exit(main())
