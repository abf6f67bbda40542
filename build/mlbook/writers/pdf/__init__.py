"""The PDF edition: the combined print document rendered by WeasyPrint, reading only the built site."""

from __future__ import annotations

import logging
from pathlib import Path

from ...book import Book
from ...diagnostics import WriterError
from ...options import Options
from ..outputs import atomic_path
from ..registry import book_file
from ..styles import STYLES, pdf_css
from . import chunks, combine, fonts
from .render import ConfinedFetcher, WarningCollector, font_dates, render_html


class PdfError(WriterError):
    """The PDF could not be written correctly; the message lists every problem."""


def write(book: Book, options: Options, site_dir: Path, out_dir: Path) -> int:
    """Render the whole book to the PDF (A4) at ``out_dir/downloads/<output_name>.pdf``; return its page count.

    With options.pdf_workers other than 1 the book is rendered in chunks by parallel worker processes
    (chunks); with 1, as one document in this process. Raises fonts.MissingFonts when a Noto family is
    absent, and PdfError when WeasyPrint reports a missing anchor, a refused URL or any other warning; out is
    then left as it was.
    """
    out = Path(out_dir) / book_file(options, ".pdf")
    fonts.require()
    workers = options.pdf_workers or chunks.default_workers()
    if workers > 1 and not options.pdf_variant:  # a tagged PDF's structure tree cannot be joined from chunks
        try:
            data, pages = chunks.write_chunked(book, options, site_dir, out, workers)
        except ValueError as exc:
            raise PdfError(str(exc)) from exc
        with atomic_path(out) as tmp:
            tmp.write_bytes(data)
        return pages
    return _write_single(book, options, site_dir, out)


def _write_single(book: Book, options: Options, site_dir: Path, out: Path) -> int:
    site_dir = Path(site_dir).resolve()
    source = combine.document(book, options, site_dir)
    fetcher = ConfinedFetcher([site_dir, STYLES])
    collect = WarningCollector()
    wlog = logging.getLogger("weasyprint")
    wlog.addHandler(collect)
    try:
        with font_dates(options.epoch):
            doc = render_html(source, site_dir.as_uri() + "/", [], pdf_css(), fetcher)
            problems = collect.messages + [f"refused: {u}" for u in fetcher.refused]
            if problems:
                raise PdfError("; ".join(sorted(set(problems))))
            with atomic_path(out) as tmp:
                doc.write_pdf(
                    tmp,
                    pdf_identifier=options.identifier.encode("utf-8"),
                    pdf_variant=options.pdf_variant or None,
                    custom_metadata=True,  # the Edition <meta> of combine.head becomes the /Edition key
                )
    finally:
        wlog.removeHandler(collect)
    return len(doc.pages)
