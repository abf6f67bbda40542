"""Checks over the built pages: every internal link, anchor and image resolves; images have alt text."""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

from ..book import Book, Chapter
from ..diagnostics import Reporter, line_of, line_offset
from ..html import article as articles
from ..html import links


class _Ids(dict):
    """Page URL -> the ids its article defines, parsed only when a link first needs them."""

    def __init__(self, book: Book, site_dir: Path) -> None:
        super().__init__()
        self.by_url, self.site_dir = book.by_url(), site_dir

    def __missing__(self, url: str) -> set[str]:
        chapter = self.by_url.get(url)
        self[url] = articles.ids(articles.load(self.site_dir, chapter)) if chapter else set()
        return self[url]


def check_site(
    book: Book,
    site_dir: Path,
    sources: dict[str, str],
    reporter: Reporter,
    coming: set[str] = frozenset(),
    only: set[str] | None = None,
) -> None:
    """Report each broken link, broken anchor, missing/remote image and image without alt text.

    sources maps a chapter's src_uri to its raw Markdown text (used to find the line of each defect); coming
    holds site paths that are written after this check (the editions), so links to them are valid. only, when
    given, limits the check to those src_uris (the pages a `serve --dirty` rebuild rendered).
    """
    site_dir = Path(site_dir)
    _CURSOR.clear()
    idsets = _Ids(book, site_dir)
    for chapter in book.pages():
        if only is not None and chapter.src_uri not in only:
            continue
        art = articles.load(site_dir, chapter)
        idsets[chapter.url] = articles.ids(art)
        text = sources.get(chapter.src_uri, "")
        for a in art.iter("a"):
            if a.get("href"):
                _check_href(book, chapter, a.get("href"), site_dir, idsets, text, reporter, coming)
        for img in art.iter("img"):
            _check_image(chapter, img, site_dir, text, reporter)


_CURSOR: dict[tuple[str, str], int] = {}
LINK_TARGET = re.compile(r"\]\(\s*<?([^)\s>]+)")


def _locate(chapter: Chapter, text: str, needles: list[str]) -> int:
    # Repeated identical links each get their own line: search on after the previous hit of the same needle.
    key = (chapter.source, needles[0])
    line = line_of(text, *needles, start=_CURSOR.get(key, 0))
    _CURSOR[key] = line_offset(text, line)
    return line


def _as_written(text: str, line: int, rendered: str) -> str:
    """The link target as the author wrote it on that line (MkDocs rewrites relative URLs when rendering)."""
    name = posixpath.basename(rendered.split("#")[0].rstrip("/"))
    lines = text.split("\n")
    if name and 0 < line <= len(lines):
        for target in LINK_TARGET.findall(lines[line - 1]):
            if name in target:
                return target
    return rendered


def _report(reporter: Reporter, chapter: Chapter, text: str, needles: list[str], kind: str, detail: str) -> None:
    reporter.report(chapter.source, _locate(chapter, text, needles), kind, detail)


def _check_href(book, chapter, href, site_dir, idsets, text, reporter, coming) -> None:
    target = links.resolve(chapter.url, href)
    frag_needle = f"#{target.fragment}" if target.fragment else ""
    needles = [f"]({href}", href, frag_needle, posixpath.basename(href.split("#")[0].rstrip("/"))]
    if target.kind == "external":
        return
    if target.kind == "bad":
        _report(
            reporter,
            chapter,
            text,
            needles,
            "link outside the book",
            f"'{href}' leaves the book; link to a chapter's .md file or use a full https:// URL",
        )
        return
    by_url = book.by_url()
    if target.kind == "page" and target.url not in by_url:
        if not (site_dir / target.url / "index.html").is_file():
            _report(
                reporter,
                chapter,
                text,
                needles,
                "broken link",
                f"'{href}' points to a page that does not exist; link to an existing chapter's .md file",
            )
        return
    if target.kind == "file" and target.url.endswith(".md"):
        _report(
            reporter,
            chapter,
            text,
            needles,
            "broken link",
            f"'{href}' points to a page that does not exist; link to an existing chapter's .md file",
        )
        return
    if target.kind == "file":
        if not (site_dir / target.url).is_file() and target.url not in coming:
            _report(
                reporter,
                chapter,
                text,
                needles,
                "broken link",
                f"'{href}' points to a file that does not exist in book/ or scripts/",
            )
        return
    if target.fragment and target.fragment not in idsets[target.url]:
        dest = by_url[target.url]
        where = "this chapter" if dest is chapter else dest.source
        _report(
            reporter,
            chapter,
            text,
            [frag_needle, href],
            "broken anchor",
            f"'#{target.fragment}' does not exist in {where}; use the id of one of its headings",
        )


def _check_image(chapter, img, site_dir, text, reporter) -> None:
    rendered = img.get("src") or ""
    target = links.resolve(chapter.url, rendered)
    problems = []
    if target.kind == "external":
        problems.append(
            ("remote image", "is fetched from the network; put the image beside the chapter and link it relatively")
        )
    elif target.kind == "bad":
        problems.append(("image outside the book", "is not a file of the book; put the image beside the chapter"))
    elif not (site_dir / target.url).is_file():
        problems.append(("missing image", f"does not exist; check the path relative to {chapter.source}"))
    if not (img.get("alt") or "").strip():
        problems.append(("image without alt text", "has no alt text; write ![what the image shows](...)"))
    if problems:
        line = _locate(chapter, text, [rendered, posixpath.basename(rendered)])
        src = _as_written(text, line, rendered)
        for kind, detail in problems:
            reporter.report(chapter.source, line, kind, f"'{src}' {detail}")
