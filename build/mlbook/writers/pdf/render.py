"""One WeasyPrint render, confined to the built site: the URL fetcher, the warning collector and the chunk worker."""

from __future__ import annotations

import gc
import logging
from dataclasses import dataclass, field
from pathlib import Path
from urllib.request import url2pathname

from weasyprint import CSS, HTML
from weasyprint.urls import URLFetcher


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


@dataclass
class Rendered:
    """What a worker sends back for one chunk (plain data, so it pickles)."""

    pdf: bytes
    pages: int
    anchors: dict[str, int] = field(default_factory=dict)  # anchor -> page index in the chunk (first occurrence)
    bookmarks: list[tuple[int, int, str, float, float]] = field(default_factory=list)  # page, level, label, x, y
    problems: list[str] = field(default_factory=list)


def render_chunk(job: tuple[str, str, str, list[str], bytes]) -> Rendered:
    """Worker: render one chunk's HTML with WeasyPrint and collect its anchors, bookmarks and warnings."""
    source, base_url, css, roots, identifier = job
    # Fewer collector passes: they cost ~15-20% of render time; cycles are still collected, so memory stays bounded.
    gc.set_threshold(50_000, 50, 100)
    fetcher = ConfinedFetcher([Path(r) for r in roots])
    collect = WarningCollector()
    logging.getLogger("weasyprint").addHandler(collect)
    doc = HTML(string=source, base_url=base_url, url_fetcher=fetcher).render(
        stylesheets=[CSS(string=css, url_fetcher=fetcher)]
    )
    out = Rendered(pdf=b"", pages=len(doc.pages))
    for index, page in enumerate(doc.pages):
        for name in page.anchors:
            out.anchors.setdefault(name, index)
        for level, label, (x, y), _state in page.bookmarks:
            out.bookmarks.append((index, level, label, x, y))
    out.problems = collect.messages + [f"refused: {u}" for u in fetcher.refused]
    out.pdf = doc.write_pdf(pdf_identifier=identifier)
    return out
