"""The PDF edition: the combined print document rendered by WeasyPrint, reading only the built site."""

from __future__ import annotations

import logging
from pathlib import Path

from pygments.formatters import HtmlFormatter

from . import combine, fonts, pdfchunks
from .book import Book
from .config import Options
from .outputs import atomic_path

STYLES = Path(__file__).parent / "styles"
CODE_STYLE = "friendly"


class PdfError(RuntimeError):
    """The PDF could not be written correctly; the message lists every problem."""


def _fetcher_class():
    from weasyprint.urls import URLFetcher

    class ConfinedFetcher(URLFetcher):
        """Serves file: URLs under the allowed folders and data: URLs; refuses everything else."""

        def __init__(self, roots: list[Path]) -> None:
            super().__init__(allowed_protocols=["file", "data"], allow_redirects=False)
            self.roots = [r.resolve() for r in roots]
            self.refused: list[str] = []

        def fetch(self, url, headers=None):
            if url.startswith("file:"):
                from urllib.request import url2pathname

                path = Path(url2pathname(url[5:].split("?")[0].split("#")[0])).resolve()
                if not any(path.is_relative_to(r) for r in self.roots):
                    self.refused.append(url)
                    raise ValueError(f"refused to read {url}: outside the built site")
            elif not url.startswith("data:"):
                self.refused.append(url)
                raise ValueError(f"refused to fetch {url}: the PDF build never uses the network")
            return super().fetch(url, headers)

    return ConfinedFetcher


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def stylesheet() -> str:
    """The print CSS: our pdf.css followed by the Pygments colours of code blocks."""
    code = HtmlFormatter(style=CODE_STYLE).get_style_defs(".highlight")
    return (STYLES / "pdf.css").read_text(encoding="utf-8") + "\n" + code


def write(book: Book, options: Options, site_dir: Path, out: Path) -> int:
    """Render the whole book to the PDF at out (A4) and return its page count.

    With options.pdf_workers other than 1 the book is rendered in chunks by parallel worker processes
    (pdfchunks); with 1, as one document in this process. Raises fonts.MissingFonts when a Noto family is
    absent, and PdfError when WeasyPrint reports a missing anchor, a refused URL or any other warning; out is
    then left as it was.
    """
    fonts.require()
    workers = options.pdf_workers or pdfchunks.default_workers()
    if workers > 1 and not options.pdf_variant:  # a tagged PDF's structure tree cannot be joined from chunks
        try:
            data, pages = pdfchunks.write_chunked(book, options, site_dir, out, workers)
        except ValueError as exc:
            raise PdfError(str(exc)) from exc
        with atomic_path(out) as tmp:
            tmp.write_bytes(data)
        return pages
    return _write_single(book, options, site_dir, out)


def _write_single(book: Book, options: Options, site_dir: Path, out: Path) -> int:
    from weasyprint import CSS, HTML

    site_dir = Path(site_dir).resolve()
    source = combine.document(book, options, site_dir)
    fetcher = _fetcher_class()([site_dir, STYLES])
    collect = _Collect()
    wlog = logging.getLogger("weasyprint")
    wlog.addHandler(collect)
    try:
        doc = HTML(string=source, base_url=site_dir.as_uri() + "/", url_fetcher=fetcher).render(
            stylesheets=[CSS(string=stylesheet(), url_fetcher=fetcher)]
        )
        problems = collect.messages + [f"refused: {u}" for u in fetcher.refused]
        if problems:
            raise PdfError("; ".join(sorted(set(problems))))
        with atomic_path(out) as tmp:
            doc.write_pdf(
                tmp, pdf_identifier=options.identifier.encode("utf-8"), pdf_variant=options.pdf_variant or None
            )
    finally:
        wlog.removeHandler(collect)
    return len(doc.pages)
