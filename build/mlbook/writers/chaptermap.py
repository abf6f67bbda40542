"""Where each page of the book lies in the book PDF, and the links of a per-chapter PDF that leave the chapter.

The book PDF is read once into plain data (spans, named destinations, the outline), so cutting many chapters
costs one pass. A link inside a chapter is kept; one to another chapter goes online (with a site_url) or to that
chapter's own PDF; one to a page without a PDF of its own (preface, part page, appendix) to the whole-book PDF.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from pypdf import PdfReader
from pypdf.generic import DictionaryObject, NameObject, TextStringObject

from ..book import Book, Chapter
from ..options import Options
from .registry import book_file, chapter_file, has_pdf

FOLDER = "downloads/chapters"  # where the chapter PDFs lie, as a site path


@dataclass(frozen=True)
class Span:
    """The pages of one page of the book (chapter, part page, preface...) in the book PDF: [start, end), 0-based."""

    chapter: Chapter
    start: int
    end: int


@dataclass(frozen=True)
class Mark:
    """A named destination: its name, 0-based page and position on the page (PDF points)."""

    name: str
    page: int
    left: float | None
    top: float | None


@dataclass
class Entry:
    """An outline entry with its destination and the entries under it."""

    title: str
    page: int
    left: float | None
    top: float | None
    children: list[Entry] = field(default_factory=list)


@dataclass
class BookMap:
    """The book PDF as plain data: where each page of the book lies, every named destination, the outline."""

    spans: list[Span]
    marks: list[Mark]
    outline: list[Entry]

    @classmethod
    def read(cls, book: Book, reader: PdfReader) -> BookMap:
        """Read the book PDF once."""
        marks = [
            Mark(name, reader.get_destination_page_number(d), d.get("/Left"), d.get("/Top"))
            for name, d in sorted(reader.named_destinations.items())
        ]
        return cls(_spans(book, {m.name: m.page for m in marks}, len(reader.pages)), marks, _entries(reader))

    def owner(self, page: int) -> Span:
        """The page of the book (a span) that the PDF page at index page belongs to."""
        return next(s for s in self.spans if s.start <= page < s.end)


def _spans(book: Book, page_of: dict[str, int], pages: int) -> list[Span]:
    """Where every page of the book starts (the destination of its slug) and ends (where the next one starts)."""
    chapters = book.pages()
    starts = sorted((page_of[c.slug], i) for i, c in enumerate(chapters) if c.slug in page_of)
    ends = [s for s, _ in starts[1:]] + [pages]
    return [Span(chapters[i], start, end) for (start, i), end in zip(starts, ends, strict=True)]


def _entries(reader: PdfReader, items: list | None = None) -> list[Entry]:
    """The outline as pypdf reads it (an entry, then a list of its children if any) as a tree of Entry."""
    out: list[Entry] = []
    for item in reader.outline if items is None else items:
        if isinstance(item, list):
            out[-1].children = _entries(reader, item)
        else:
            page = reader.get_destination_page_number(item)
            out.append(Entry(str(item.title), page, item.get("/Left"), item.get("/Top")))
    return out


class Resolver:
    """Rewrites the links of a chapter's pages that leave the chapter."""

    def __init__(self, bookmap: BookMap, options: Options) -> None:
        self.page_of = {m.name: m.page for m in bookmap.marks}
        self.bookmap, self.options = bookmap, options

    def rewrite(self, page, span: Span) -> None:
        """Point every link of page that leaves span at the other chapter (online or its PDF) or at the book."""
        for ref in page.get("/Annots") or []:
            annot = ref.get_object()
            name = destination_name(annot)
            target = self.page_of.get(name) if name else None
            if target is None or span.start <= target < span.end:
                continue
            annot[NameObject("/A")] = self.action(name, self.bookmap.owner(target))
            if "/Dest" in annot:
                del annot["/Dest"]

    def action(self, name: str, owner: Span) -> DictionaryObject:
        """A URI action to the page online (with a site_url), else a GoToR to the PDF that holds the destination."""
        chapter = owner.chapter
        if self.options.site_url:
            fragment = name[len(chapter.slug) + 2 :] if name.startswith(f"{chapter.slug}--") else ""
            url = self.options.site_url.rstrip("/") + "/" + chapter.url + (f"#{fragment}" if fragment else "")
            return DictionaryObject({NameObject("/S"): NameObject("/URI"), NameObject("/URI"): TextStringObject(url)})
        path = chapter_file(chapter) if has_pdf(chapter) else book_file(self.options, ".pdf")
        return DictionaryObject(
            {
                NameObject("/S"): NameObject("/GoToR"),
                NameObject("/F"): TextStringObject(posixpath.relpath(path, FOLDER)),
                NameObject("/D"): TextStringObject(name),
            }
        )


def destination_name(annot) -> str | None:
    """The named destination a link annotation goes to (its /Dest or its GoTo action), else None."""
    dest = annot.get("/Dest")
    action = annot.get("/A")
    if dest is None and action is not None and action.get("/S") == "/GoTo":
        dest = action.get("/D")
    return str(dest) if isinstance(dest, str) else None
