"""File names a client sends, kept as display text only, and sent back in a safe ``Content-Disposition``.

An uploaded file's name is the sender's to choose: :func:`display_name` reduces
it on receipt to one that shows as what it is. It is put in Unicode's composed
form (NFC, so that ``é`` is one name however typed); only its last part is
kept (no ``/``, ``\\`` or ``..``: a browser sends ``C:\\Users\\x\\s.zip`` and
hostile clients ``../../etc/passwd``); control and format characters go (NUL,
CR/LF, the bidirectional overrides that show ``exe.gpj`` as ``jpg.exe``,
zero-width characters); runs of spaces become one; the name is at most
:data:`MAX_NAME` characters, its extension kept; ``submission`` stands for a
name with nothing left. The name is never a path on disk (podium stores files
by id).

:func:`content_disposition` writes the header of a download as RFC 6266 says:
an ASCII ``filename=`` for old clients and ``filename*=UTF-8''...`` with the
name itself, neither able to carry a quote, a semicolon or a line break.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Literal
from urllib.parse import quote

MAX_NAME = 120  # characters kept of a sent name
FALLBACK = "submission"
_DROPPED = frozenset(("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"))  # controls, formats (bidi, zero-width), unassigned
_ASCII_UNSAFE = re.compile(r"[^A-Za-z0-9 !#$&+,.=@^_`{}~()\[\]-]")


def display_name(sent: str | None, fallback: str = FALLBACK) -> str:
    """``sent`` as podium keeps and shows it (the module's rules); ``fallback`` when nothing is left.

    >>> display_name("../../etc/passwd"), display_name("C:\\\\Users\\\\ann\\\\s.zip"), display_name("a\\r\\nSet-Cookie: x=1")
    ('passwd', 's.zip', 'aSet-Cookie: x=1')
    >>> display_name("invoice\\u202egpj.exe"), display_name(".."), display_name("\\x00")
    ('invoicegpj.exe', 'submission', 'submission')
    """
    text = unicodedata.normalize("NFC", sent or "")
    text = "".join(c for c in text if unicodedata.category(c) not in _DROPPED)
    text = " ".join(text.replace("\\", "/").rsplit("/", 1)[-1].split()).strip(". ")
    if not text:
        return fallback
    if len(text) > MAX_NAME:
        stem, dot, extension = text.rpartition(".")
        extension = extension if dot and stem and len(extension) <= 16 else ""
        text = text[: MAX_NAME - len(extension) - (1 if extension else 0)].rstrip(". ") + (
            f".{extension}" * bool(extension)
        )
    return text


def content_disposition(name: str, kind: Literal["attachment", "inline"] = "attachment") -> str:
    """The ``Content-Disposition`` of a download named ``name`` (reduced by :func:`display_name` first).

    >>> content_disposition('résumé "1".pdf')
    'attachment; filename="resume _1_.pdf"; filename*=UTF-8\\'\\'r%C3%A9sum%C3%A9%20%221%22.pdf'
    """
    shown = display_name(name)
    ascii_name = unicodedata.normalize("NFKD", shown).encode("ascii", "ignore").decode()
    ascii_name = _ASCII_UNSAFE.sub("_", ascii_name).strip(" .") or FALLBACK
    return f"{kind}; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(shown, safe='')}"
