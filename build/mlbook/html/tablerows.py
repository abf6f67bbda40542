"""Mark the table rows that are short enough to keep on one page in print."""

from __future__ import annotations

import math

from lxml import html as lhtml

# A row is short when no cell can need more lines than this: about a third of an A4 page at 8.6pt.
SHORT_ROW_LINES = 20
# Characters per line assumed for a cell, deliberately few (a narrow column), so a row is called short only
# when it surely is: a row wrongly kept whole and taller than a page would start a page without the header.
CELL_CHARS_PER_LINE = 30
BLOCKS = {"p", "li", "div", "pre", "blockquote", "table", "ul", "ol", "dl", "dd", "dt", "figure", "img", "svg"}
SHORT_ROW_CLASS = "print-short-row"


def cell_lines(cell: lhtml.HtmlElement) -> int:
    """An upper estimate of the lines a table cell takes in print: line breaks, blocks and wrapped text."""
    breaks = sum(1 for e in cell.iter() if e.tag == "br" or e.tag in BLOCKS)
    code_lines = sum((e.text_content() or "").count("\n") for e in cell.iter("pre"))
    return breaks + code_lines + math.ceil(len(cell.text_content().strip()) / CELL_CHARS_PER_LINE)


def mark_short_rows(article: lhtml.HtmlElement) -> None:
    """Give every body row whose cells all fit in SHORT_ROW_LINES lines the class SHORT_ROW_CLASS, in place.

    The print stylesheet keeps such a row on one page (`break-inside: avoid`). Not every row: WeasyPrint
    starts the page after an unbreakable row taller than the space left without the repeated header, so a
    tall row keeps splitting line by line (orphans and widows in the stylesheet).
    """
    for row in article.iter("tr"):
        cells = [c for c in row if c.tag in ("td", "th")]
        if cells and row.getparent().tag != "thead" and max(map(cell_lines, cells)) <= SHORT_ROW_LINES:
            row.set("class", f"{row.get('class', '')} {SHORT_ROW_CLASS}".strip())
