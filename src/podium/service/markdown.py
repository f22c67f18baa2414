"""The organizer's Markdown (content pages, terms) as HTML that cannot run or load anything foreign.

CommonMark with tables, rendered by markdown-it-py with raw HTML off: a
``<script>``, an ``<iframe>`` or any tag in the file is shown as text (a
column's alignment is a class, ``align-right``, not the ``style`` attribute
the pages' Content-Security-Policy refuses). Links
keep an ``http``, ``https`` or ``mailto`` address or a relative one (another
page is ``[FAQ](faq)``); any other scheme (``javascript:``, ``data:``,
``vbscript:``, ``file:``), however it is spelt or escaped, leaves the text
without a link. An image shows only when it is one of the contest's public
files (``[data] files``, written relative to the Markdown file): it is then
served from the data page; any other image (another site's, a ``data:`` URI)
is drawn as its alternative text. Math is not typeset: write formulas as code
or in Unicode (no script runs on the pages, and no TeX engine on the server).

A file is rendered once for each change of it (its modification time and size
are the cache's key), not on every request.
"""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

from podium.contest.model import MAX_PAGE_BYTES

_SCHEME = re.compile(r"^\s*([A-Za-z][A-Za-z0-9+.-]*):")
LINK_SCHEMES = ("http", "https", "mailto")


def safe_link(url: str) -> bool:
    """Whether a link may keep ``url``: an http, https or mailto address, or one without a scheme (relative)."""
    scheme = _SCHEME.match(url)
    return scheme is None or scheme.group(1).lower() in LINK_SCHEMES


def _image(
    public: Mapping[str, str], folder: str
) -> Any:  # markdown-it's render rule: (self, tokens, idx, options, env) -> str
    """The image rule: a public file's image served from the data page; any other image as its alternative text."""

    def render(renderer: RendererHTML, tokens: Sequence[Token], index: int, options: OptionsDict, env: EnvType) -> str:
        token = tokens[index]
        source = str(token.attrGet("src") or "")
        served = None if _SCHEME.match(source) or source.startswith("/") else _public_url(source, folder, public)
        alt = renderer.renderInlineAsText(token.children or [], options, env)
        if served is None:
            return f'<span class="image-left-out">{escapeHtml(alt)}</span>' if alt else ""
        token.attrSet("src", served)
        token.attrSet("alt", alt)
        token.attrSet("loading", "lazy")
        return renderer.renderToken(tokens, index, options, env)

    return render


def _public_url(source: str, folder: str, public: Mapping[str, str]) -> str | None:
    """The URL of the public file that ``source`` (relative to the page's folder) names, if it names one."""
    name = posixpath.normpath(posixpath.join(folder, unquote(source.split("#")[0].split("?")[0])))
    return public.get(name)


def _link_open(renderer: RendererHTML, tokens: Sequence[Token], index: int, options: OptionsDict, env: EnvType) -> str:
    """A link to another site opens nothing of this one to it (``rel=noopener noreferrer``) and passes it no rank."""
    token = tokens[index]
    if _SCHEME.match(str(token.attrGet("href") or "")):
        token.attrSet("rel", "nofollow noopener noreferrer")
    return renderer.renderToken(tokens, index, options, env)


@functools.lru_cache(maxsize=256)
def _rendered(
    path: str, _mtime_ns: int, _size: int, folder: str, public: tuple[tuple[str, str], ...], down: int
) -> str:
    markdown = MarkdownIt("commonmark", {"html": False}).enable("table")
    markdown.validateLink = safe_link  # type: ignore[method-assign]
    markdown.add_render_rule("image", _image(dict(public), folder))
    markdown.add_render_rule("link_open", _link_open)
    with open(path, encoding="utf-8", errors="replace") as file:
        tokens = markdown.parse(file.read(MAX_PAGE_BYTES))  # the check refuses a larger page; one grown since is cut
    for token in tokens:
        if down and token.type in ("heading_open", "heading_close"):
            token.tag = f"h{min(int(token.tag[1]) + down, 6)}"
        if token.type in ("th_open", "td_open") and token.attrs.get("style"):  # a column aligned: | --: |
            token.attrSet("class", "align-" + str(token.attrs.pop("style")).removeprefix("text-align:"))
    return markdown.renderer.render(tokens, markdown.options, {})


def render_file(path: Path, base: Path, public: Mapping[str, str], down: int = 0) -> str:
    """The Markdown file ``path`` as safe HTML; ``public``: each public file's name (relative to ``base``, the contest file's folder) and URL.

    ``down``: how many levels its headings go down (the terms page has its own ``h1``: the file's ``#`` is an ``h2``).
    """
    status = path.stat()
    folder = posixpath.relpath(path.parent.as_posix(), base.as_posix())
    return _rendered(str(path), status.st_mtime_ns, status.st_size, folder, tuple(sorted(public.items())), down)
