"""Links that data files name (``chapter.md#anchor``, ``scripts/...``): checked, titled and made relative.

A data link is checked twice: its file when the page that renders it is built (the anchor is not known yet),
and its anchor after the build against the ids of the built page, so a dead anchor is reported at the data
file's line, not at the line of the block that rendered it.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from pathlib import Path

from markdown.extensions.toc import slugify

from ..book import Book
from ..diagnostics import Reporter
from ..html import article as articles

HEADING = re.compile(r"^(#{1,6})\s+(?P<text>.+?)\s*(\{[^}]*#(?P<id>[\w-]+)[^}]*\})?\s*$")
MARKUP = re.compile(r"[`*]|\[([^\]]*)\]\([^)]*\)")


@dataclass(frozen=True)
class DataLink:
    """A chapter link named in a data file: where it is written and what it points to (``x/y.md#id``)."""

    shown: str
    line: int
    target: str


def file_error(docs_dir: Path, target: str) -> str | None:
    """Why the file part of a chapter link is dead (None when the chapter exists)."""
    path = target.split("#", 1)[0]
    if not (Path(docs_dir) / path).is_file():
        return f"'{path}' is not a chapter under book/; name an existing CHAPTER.md#anchor"
    return None


def headings(docs_dir: Path, path: str) -> tuple[str, dict[str, str]]:
    """A chapter's title and a map of heading id -> heading text, from its Markdown (best effort, for titles)."""
    title, found = path, {}
    try:
        lines = (Path(docs_dir) / path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return title, found
    fence = False
    for line in lines:
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
        match = None if fence else HEADING.match(line)
        if not match:
            continue
        text = MARKUP.sub(lambda m: m.group(1) or "", match["text"]).strip()
        if len(match.group(1)) == 1 and title == path:
            title = text
        found.setdefault(match["id"] or slugify(text, "-"), text)
    return title, found


def describe(docs_dir: Path, target: str) -> str:
    """Link text for a target: ``Chapter title`` or ``Chapter title, "Heading"``."""
    path, _, anchor = target.partition("#")
    title, found = headings(docs_dir, path)
    return f"{title}, “{found[anchor]}”" if anchor in found else title


def relative(from_src: str, to_path: str) -> str:
    """A Markdown link from the page at book/<from_src> to book/<to_path> or to a repository file (scripts/)."""
    path, _, anchor = to_path.partition("#")
    rel = posixpath.relpath(path, posixpath.dirname(from_src) or ".")
    return rel + (f"#{anchor}" if anchor else "")


def check_anchors(book: Book, site_dir: Path, data_links: list[DataLink], reporter: Reporter) -> None:
    """Report each data link whose anchor is not an id of the built page, at the data file's line."""
    by_src = {c.src_uri: c for c in book.pages()}
    cache: dict[str, set[str]] = {}
    for link in data_links:
        path, _, anchor = link.target.partition("#")
        chapter = by_src.get(path)
        if chapter is None:
            reporter.report(link.shown, link.line, "broken link", f"'{path}' is not a page of the book's nav")
            continue
        if not anchor:
            continue
        if path not in cache:
            try:
                cache[path] = articles.ids(articles.load(Path(site_dir), chapter))
            except (OSError, ValueError):
                cache[path] = set()
        if anchor not in cache[path]:
            detail = f"'#{anchor}' is not an id of {chapter.source}; use the id of one of its headings"
            reporter.report(link.shown, link.line, "broken anchor", detail)
