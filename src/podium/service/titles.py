"""Score names as a page shows them: ``object_hausdorff/testA`` is "object Hausdorff (testA)".

The name itself stays the key (sorting, the API, the JSON); only the words change.

>>> title("object_hausdorff/testA"), title("nmi"), title("top5_error"), title("bcubed_f"), title("f1")
('object Hausdorff (testA)', 'NMI', 'top-5 error', 'BCubed F', 'F1')
"""

from __future__ import annotations

import re

WORDS = {
    "f1": "F1",
    "nmi": "NMI",
    "dice": "Dice",
    "hausdorff": "Hausdorff",
    "bcubed": "BCubed",
    "f": "F",
    "ap": "AP",
    "map": "mAP",
    "iou": "IoU",
}


def title(name: str) -> str:
    """The words of a score's name (its part or class in parentheses)."""
    base, _, part = name.partition("/")
    words = [WORDS.get(word, re.sub(r"^top(\d+)$", r"top-\1", word)) for word in base.split("_")]
    return " ".join(words) + (f" ({part})" if part else "")
