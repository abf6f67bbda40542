"""One WeasyPrint render, confined to the built site: the URL fetcher, the warning collector and the chunk worker."""

from __future__ import annotations

import gc
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.request import url2pathname

from weasyprint import CSS, HTML
from weasyprint.urls import URLFetcher

from ..styles import pdf_css


class ConfinedFetcher(URLFetcher):
    """Serves file: URLs under the allowed folders and data: URLs; refuses everything else."""

    def __init__(self, roots: list[Path]) -> None:
        super().__init__(allowed_protocols=["file", "data"], allow_redirects=False)
        self.roots = [r.resolve() for r in roots]
        self.refused: list[str] = []

    def fetch(self, url, headers=None):
        """Fetch url, or record it in refused and raise ValueError when it lies outside the roots."""
        if url.startswith("file:"):
            path = Path(url2pathname(url[5:].split("?")[0].split("#")[0])).resolve()
            if not any(path.is_relative_to(r) for r in self.roots):
                self.refused.append(url)
                raise ValueError(f"refused to read {url}: outside the built site")
        elif not url.startswith("data:"):
            self.refused.append(url)
            raise ValueError(f"refused to fetch {url}: the PDF build never uses the network")
        return super().fetch(url, headers)


class WarningCollector(logging.Handler):
    """Keeps the message of every WARNING or worse record (WeasyPrint's missing anchors, bad CSS...)."""

    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        """Keep one record's message."""
        self.messages.append(record.getMessage())


def render_html(source: str, base_url: str, roots: list, css: str | None = None, fetcher=None):
    """Lay out one HTML document with WeasyPrint and return its Document (pages, anchors, bookmarks).

    roots: folders the document may read (a ConfinedFetcher over them is made unless fetcher is given); css:
    the stylesheet, by default the print style. Width and height attributes and ``<ol start>`` count
    (presentational hints), as they do in a browser.
    """
    if css is None:
        css = pdf_css()
    fetcher = fetcher or ConfinedFetcher([Path(r) for r in roots])
    return HTML(string=source, base_url=base_url, url_fetcher=fetcher).render(
        stylesheets=[CSS(string=css, url_fetcher=fetcher)], presentational_hints=True
    )


# How render_chunk calls WeasyPrint, beyond the job itself: part of the chunk cache's key, so a chunk rendered
# with other settings (before presentational hints, or before fonts carried the book's date) is rendered again.
# The date itself is the job's epoch, which the key holds too.
RENDER_SETTINGS = "presentational_hints=True;font_date=epoch"


@dataclass
class Rendered:
    """What a worker sends back for one chunk (plain data, so it pickles)."""

    pdf: bytes
    pages: int
    anchors: dict[str, int] = field(default_factory=dict)  # anchor -> page index in the chunk (first occurrence)
    bookmarks: list[tuple[int, int, str, float, float]] = field(default_factory=list)  # page, level, label, x, y
    problems: list[str] = field(default_factory=list)


@contextmanager
def font_dates(epoch: int) -> Iterator[None]:
    """Within the block, fonts that WeasyPrint rewrites carry the book's date instead of the wall clock's.

    WeasyPrint saves some fonts again with fontTools (colour emoji fonts, to drop their bitmaps), and fontTools
    stamps the font's head.modified with the current time unless SOURCE_DATE_EPOCH is set: without this, two
    renders of one page a second apart differ in bytes.
    """
    saved = os.environ.get("SOURCE_DATE_EPOCH")
    os.environ["SOURCE_DATE_EPOCH"] = str(epoch)
    try:
        yield
    finally:
        if saved is None:
            del os.environ["SOURCE_DATE_EPOCH"]
        else:
            os.environ["SOURCE_DATE_EPOCH"] = saved


def render_chunk(job: tuple[str, str, str, list[str], bytes, int]) -> Rendered:
    """Worker: render one chunk's HTML with WeasyPrint and collect its anchors, bookmarks and warnings.

    job: (HTML, base URL, CSS, folders it may read, PDF identifier, the book's epoch in seconds).
    """
    source, base_url, css, roots, identifier, epoch = job
    # Fewer collector passes: they cost ~15-20% of render time; cycles are still collected, so memory stays bounded.
    gc.set_threshold(50_000, 50, 100)
    fetcher = ConfinedFetcher([Path(r) for r in roots])
    collect = WarningCollector()
    logging.getLogger("weasyprint").addHandler(collect)
    with font_dates(epoch):
        doc = render_html(source, base_url, roots, css, fetcher)
        pdf = doc.write_pdf(pdf_identifier=identifier)
    out = Rendered(pdf=b"", pages=len(doc.pages))
    for index, page in enumerate(doc.pages):
        for name in page.anchors:
            out.anchors.setdefault(name, index)
        for level, label, (x, y), _state in page.bookmarks:
            out.bookmarks.append((index, level, label, x, y))
    out.problems = collect.messages + [f"refused: {u}" for u in fetcher.refused]
    out.pdf = pdf
    return out
