"""Per-chapter PDFs: each chapter's pages cut from the assembled book PDF, with its own outline and live links.

A chapter's PDF keeps the book's page numbers (printed on the pages, and as page labels for the viewer), the
chapter's part of the book's outline, and every link inside the chapter. A link to another chapter goes to that
chapter online when the book has a site_url, else to the sibling file ``<slug>.pdf``; a link to a page that
has no PDF of its own (the preface, a part page, an appendix) goes to the whole-book PDF beside the folder.
"""

from __future__ import annotations

import io
from pathlib import Path

from pypdf import PdfReader, PdfWriter
from pypdf.generic import ArrayObject, ByteStringObject, Destination, Fit, NameObject, TextStringObject

from ..book import Book
from ..diagnostics import WriterError
from ..options import Options
from ..provenance import as_datetime
from .chaptermap import BookMap, Entry, Resolver, Span
from .outputs import atomic_path
from .registry import book_file, chapter_file, chapters_with_pdf


class ChaptersError(WriterError):
    """The per-chapter PDFs could not be cut; the message says why."""


def book_pdf(options: Options, folders: list[Path]) -> Path:
    """The book PDF in the first folder that has it; raises ChaptersError when none has."""
    for folder in folders:
        if (folder / book_file(options, ".pdf")).is_file():
            return folder / book_file(options, ".pdf")
    raise ChaptersError(f"{book_file(options, '.pdf')} not found: write the PDF first (python -m mlbook pdf)")


def write(book: Book, options: Options, site_dir: Path, out_dir: Path) -> int:
    """Cut every chapter's PDF from the book PDF under out_dir (else site_dir); return how many were written.

    Raises ChaptersError when the book PDF is missing or a chapter has no destination in it.
    """
    reader = PdfReader(book_pdf(options, [Path(out_dir), Path(site_dir)]))
    bookmap = BookMap.read(book, reader)
    by_slug = {s.chapter.slug: s for s in bookmap.spans}
    wanted = chapters_with_pdf(book)
    missing = [c.source for c in wanted if c.slug not in by_slug]
    if missing:
        raise ChaptersError(f"the book PDF has no destination for {', '.join(missing)}")
    resolver = Resolver(bookmap, options)
    for chapter in wanted:
        cut = Cut(reader, by_slug[chapter.slug], bookmap, options)
        with atomic_path(Path(out_dir) / chapter_file(chapter)) as tmp:
            tmp.write_bytes(cut.pdf(resolver))
    return len(wanted)


class Cut:
    """One chapter's PDF cut from the book: pages, destinations, links, outline, page labels and metadata."""

    def __init__(self, reader: PdfReader, span: Span, bookmap: BookMap, options: Options) -> None:
        self.span, self.bookmap, self.options = span, bookmap, options
        self.writer = PdfWriter()
        for index in range(span.start, span.end):
            self.writer.add_page(reader.pages[index])

    def pdf(self, resolver: Resolver) -> bytes:
        """The chapter's PDF, its links that leave the chapter rewritten by resolver."""
        self.destinations()
        for page in self.writer.pages:
            resolver.rewrite(page, self.span)
        self.outline()
        self.metadata()
        buf = io.BytesIO()
        self.writer.write(buf)
        return buf.getvalue()

    def inside(self, page: int) -> bool:
        """Whether the book's page index lies in this chapter."""
        return self.span.start <= page < self.span.end

    def destinations(self) -> None:
        """Keep every named destination of the chapter's pages, at the same place on the page."""
        for mark in self.bookmap.marks:
            if self.inside(mark.page):
                target = self.writer.pages[mark.page - self.span.start].indirect_reference
                fit = Fit.xyz(left=mark.left, top=mark.top)
                self.writer.add_named_destination_object(Destination(TextStringObject(mark.name), target, fit))

    def outline(self) -> None:
        """The chapter's entry of the book's outline and everything under it, on the chapter's pages."""
        entry = _find(self.bookmap.outline, self.span)
        if entry is not None:
            self._add(entry, parent=None)

    def _add(self, entry: Entry, parent) -> None:
        fit = Fit.xyz(left=entry.left, top=entry.top)
        page = entry.page - self.span.start
        added = self.writer.add_outline_item(title=entry.title, page_number=page, parent=parent, fit=fit)
        for child in entry.children:
            self._add(child, added)

    def metadata(self) -> None:
        """Title, author, edition, language, dates, a fixed identifier, and page labels numbered as in the book."""
        stamp = as_datetime(self.options.epoch).strftime("D:%Y%m%d%H%M%SZ")
        title = f"{self.span.chapter.display_title} — {self.options.title}"
        self.writer.add_metadata(
            {"/Title": title, "/Author": self.options.author, "/Creator": "mlbook", "/Producer": "mlbook (pypdf)"}
            | {"/Subject": f"{self.options.subtitle} (edition {self.options.edition})"}
            | {"/Edition": self.options.edition, "/CreationDate": stamp, "/ModDate": stamp}
        )
        self.writer.set_page_label(0, len(self.writer.pages) - 1, style="/D", start=self.span.start + 1)
        self.writer._root_object[NameObject("/Lang")] = TextStringObject(self.options.language)
        ident = ByteStringObject(f"{self.options.identifier}#{self.span.chapter.slug}".encode())
        self.writer._ID = ArrayObject([ident, ident])


def _find(entries: list[Entry], span: Span) -> Entry | None:
    """The outline entry of the chapter (its title, on its first page), searched at every depth."""
    for entry in entries:
        if entry.title == span.chapter.display_title and entry.page == span.start:
            return entry
        found = _find(entry.children, span)
        if found:
            return found
    return None
