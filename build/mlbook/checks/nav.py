"""Checks of the book's order: every nav entry has a file, every chapter is in the nav, no two share a slug."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..book import Book
from ..diagnostics import Reporter, line_of


def check_nav(
    in_nav: set[str],
    exists: Callable[[str], bool],
    chapters: Iterable[str],
    config: tuple[str, str],
    docs: str,
    reporter: Reporter,
) -> None:
    """Report nav entries whose file is missing and chapters (src_uris) that the nav leaves out.

    in_nav: the paths the nav names; exists: whether a path is a file of the site; chapters: the site's Markdown
    pages (empty when the book has no nav: MkDocs then lists every page); config: the name and text of
    mkdocs.yml (to find the line of an entry); docs: the name of the docs folder (``book``).
    """
    name, text = config
    for path in sorted(in_nav):
        if not exists(path):
            reporter.report(
                name,
                line_of(text, f" {path}", path),
                "nav entry for a missing file",
                f"'{path}' does not exist in {docs}/; fix the path or create the chapter",
            )
    for src_uri in chapters:
        if src_uri not in in_nav:
            reporter.report(
                f"{docs}/{src_uri}",
                1,
                "chapter missing from nav",
                "add it under its part in the nav of mkdocs.yml (the nav is the book's order)",
            )


def check_slugs(book: Book, docs: str, reporter: Reporter) -> None:
    """Report each chapter whose slug (its file name in the PDF and EPUB) another chapter already has."""
    seen: dict[str, str] = {}
    for chapter in book.pages():
        if chapter.slug in seen:
            reporter.report(
                f"{docs}/{chapter.src_uri}",
                1,
                "duplicate slug",
                f"'{chapter.slug}' is also the slug of {docs}/{seen[chapter.slug]}; rename one file",
            )
        seen.setdefault(chapter.slug, chapter.src_uri)
