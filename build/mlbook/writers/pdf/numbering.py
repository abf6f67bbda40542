"""Page numbers of the chunked PDF: the printed label of each page, its overlay, and the numbered front matter."""

from __future__ import annotations

from ...book import Book
from ...options import Options
from .assemble import XREF
from .combine import front_matter, html_document, toc


def page_label(index: int, front_pages: int) -> str:
    """The printed number of the page at 0-based index: none on the cover, roman in the front matter."""
    if index == 0:
        return ""
    if index < front_pages:
        return _roman(index + 1)
    return str(index + 1)


def _roman(n: int) -> str:
    out = ""
    for value, letters in ((10, "x"), (9, "ix"), (5, "v"), (4, "iv"), (1, "i")):
        while n >= value:
            out, n = out + letters, n - value
    return out


def overlay_html(labels: list[str], options: Options) -> str:
    """A document of one page per label that shows only that label where the page number goes."""
    pages = "".join(f'<div class="n" data-n="{label}"></div>' for label in labels)
    css = (
        "<style>@page { size: A4; margin: 22mm 20mm 24mm 22mm; @bottom-center { content: string(n); "
        'font: 9pt "Noto Sans"; color: #444; } } .n { string-set: n attr(data-n); height: 1px; '
        "break-after: page; } .n:last-child { break-after: auto; }</style>"
    )
    head = f'<meta charset="utf-8">{css}'
    return f'<!DOCTYPE html><html lang="{options.language}"><head>{head}</head><body>{pages}</body></html>'


def front_html(book: Book, options: Options, page_of: dict[str, str] | None) -> str:
    """Cover, colophon and contents; with page_of (anchor -> printed number) the contents show the numbers."""
    contents = toc(book)
    for a in contents.iter("a"):
        a.set("data-page", (page_of or {}).get(a.get("href", "#")[1:], "000"))
        a.set("href", XREF + a.get("href", "#")[1:])
    return html_document([*front_matter(options), contents], options)
