"""What a contest publishes beside its boards: content pages, public files, links, and each track's starting kit, resolved."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from podium.contest.model import ContestFile, Link

KNOWN_TITLES = {"overview": "Overview", "evaluation": "Evaluation", "data": "Data", "faq": "FAQ"}


@dataclass(frozen=True)
class Page:
    """A content page: its id (its URL's last part), its title, its Markdown file."""

    id: str
    title: str
    path: Path


@dataclass(frozen=True)
class PublicFile:
    """A file the data page serves: its name as the contest file lists it (and its URL says), its path."""

    name: str
    path: Path


@dataclass(frozen=True)
class Content:
    """The contest's pages in the file's order, its public files, and its links to files kept elsewhere."""

    pages: tuple[Page, ...] = ()
    files: tuple[PublicFile, ...] = ()
    links: tuple[Link, ...] = ()
    terms: Path | None = None

    def page(self, page_id: str) -> Page | None:
        return next((p for p in self.pages if p.id == page_id), None)

    def file(self, name: str) -> PublicFile | None:
        """The listed file of that exact name, else ``None``: a name is looked up, never joined to a folder."""
        return next((f for f in self.files if f.name == name), None)


@dataclass(frozen=True)
class KitPlan:
    """A track's starting kit: the sample items' truth (none of them in the test set) and the baseline submission."""

    truth: Path
    submission: Path
    units: tuple[str, ...] = ()


def published(content: Content, kits: dict[str, KitPlan]) -> dict[str, Any]:
    """What ``podium contest check`` shows of the pages, public files, links and kits (``kits``: by track id); empty without any."""
    shown: dict[str, Any] = {}
    if content.pages:
        shown["pages"] = {page.id: str(page.path) for page in content.pages}
    if content.files or content.links:
        shown["data"] = {"files": [f.name for f in content.files], "links": [link.url for link in content.links]}
    if kits:
        shown["kits"] = {track: {"truth": str(k.truth), "items": len(k.units)} for track, k in kits.items()}
    return shown


def title_of(page_id: str) -> str:
    """A page's title: the known ones' (``faq`` is FAQ), else its id in words (``getting-started`` is Getting started)."""
    return KNOWN_TITLES.get(page_id) or page_id.replace("-", " ").capitalize()


def content_of(base: Path, declared: ContestFile) -> Content:
    """The contest file's pages, files and links, their paths made absolute."""
    return Content(
        tuple(Page(key, title_of(key), base / text) for key, text in declared.pages.items()),
        tuple(PublicFile(text, base / text) for text in declared.data.files),
        tuple(declared.data.links),
        None if declared.service.terms is None else base / declared.service.terms,
    )
