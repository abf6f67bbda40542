"""Checks of the book's order: every nav entry has a file, every chapter is in the nav, no two share a slug."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..book import Book, Section
from ..diagnostics import Reporter, line_of
from ..navigation import entry_lines


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
    lines = entry_lines(text)
    for path in sorted(in_nav):
        if not exists(path):
            reporter.report(
                name,
                lines.get(path) or line_of(text, f" {path}", path),
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


def check_slugs(book: Book, config: tuple[str, str], docs: str, reporter: Reporter) -> None:
    """Report, at its nav line, each entry whose slug (its anchor and file name in the PDF and EPUB) is taken.

    config: the name and text of mkdocs.yml. A page-less section's slug is ``part-<n>``/``section-<n>-<m>``.
    """
    name, text = config
    lines = entry_lines(text)
    seen: dict[str, str] = {}
    for entry in book.walk():
        page = entry.page if isinstance(entry, Section) else entry
        what = f"{docs}/{page.src_uri}" if page else f"the section '{entry.title}'"
        key = page.src_uri if page else entry.title
        if entry.slug in seen:
            reporter.report(
                name,
                lines.get(key) or line_of(text, key),
                "duplicate slug",
                f"{what} and {seen[entry.slug]} both get the identifier '{entry.slug}', the name of their file in "
                "the EPUB and of their anchors in the PDF; rename one of them",
            )
        seen.setdefault(entry.slug, what)
