"""`make split-rows`: which table rows of the real book the PDF splits across pages, measured on its layout.

The print stylesheet lets rows split, so that a table's header repeats on every page (styles/pdf.css); orphans
and widows of ten lines and `tr.print-short-row` (html/tablerows.py) are meant to keep every row shorter than a
third of a page whole. This lays out the built site's body exactly as the PDF writer does (the same chunk
documents and stylesheet, writers.pdf.chunks.body_chunks), finds every body row whose box lies on more than one
page, and prints the tables, the rows, the split rows with their height against the page's, and one line per
split row shorter than a third of a page: ``book/<chapter>.md:1: split-short-row: ...``. Exit 1 when any is.
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from weasyprint.formatting_structure import boxes

from ..book import Book
from ..writers import load_options
from ..writers.pdf.chunks import body_chunks
from ..writers.pdf.render import render_html

THRESHOLD = 1 / 3  # of the page's content height
PT = 0.75  # WeasyPrint lays out in CSS px; 1px = 0.75pt


@dataclass
class SplitRow:
    """One body row laid out on more than one page: where it is, what it says, its pieces' heights in pt."""

    chapter: str
    text: str
    pieces: list[float]
    short_marked: bool

    @property
    def height(self) -> float:
        """The row's whole height: its pieces together."""
        return sum(self.pieces)


@dataclass
class Measured:
    """What one chunk's layout holds (plain data, so it pickles)."""

    tables: int = 0
    rows: int = 0
    page_height: float = 0.0  # content height of a page, pt
    tallest: float = 0.0  # the tallest body row, pt
    tall_rows: int = 0  # body rows taller than THRESHOLD of a page
    tables_across: int = 0  # tables laid out on more than one page
    split: list[SplitRow] = field(default_factory=list)


def measure_pages(pages) -> Measured:
    """Count the tables and body rows of laid-out pages (weasyprint Document.pages) and find the split rows."""
    out, tables, pieces, info = Measured(), {}, {}, {}

    def walk(box, chapter: str, in_head: bool, page_index: int) -> None:
        element = getattr(box, "element", None)
        if box.element_tag == "section" and element is not None and element.get("id"):
            chapter = element.get("id")
        if isinstance(box, boxes.TableBox):
            tables.setdefault(id(element), set()).add(page_index)
        if isinstance(box, boxes.TableRowGroupBox):
            in_head = box.is_header or box.is_footer
        if isinstance(box, boxes.TableRowBox) and not in_head:
            pieces.setdefault(id(element), []).append(box.margin_height() * PT)
            classes = (element.get("class") or "").split()
            text = " ".join("".join(element.itertext()).split())[:60]
            info.setdefault(id(element), (chapter, text, "print-short-row" in classes))
            return
        for child in getattr(box, "children", ()):
            if isinstance(child, boxes.Box):
                walk(child, chapter, in_head, page_index)

    for page_index, page in enumerate(pages):
        out.page_height = max(out.page_height, page._page_box.height * PT)
        walk(page._page_box, "", False, page_index)
    out.tables, out.rows = len(tables), len(pieces)
    out.tables_across = sum(1 for on in tables.values() if len(on) > 1)
    heights = [sum(p) for p in pieces.values()]
    out.tallest = max(heights, default=0.0)
    out.tall_rows = sum(1 for h in heights if h >= out.page_height * THRESHOLD)
    out.split = [
        SplitRow(chapter=info[key][0], text=info[key][1], pieces=p, short_marked=info[key][2])
        for key, p in pieces.items()
        if len(p) > 1
    ]
    return out


def measure_chunk(job: tuple[str, str, str, list[str]]) -> Measured:
    """Worker: lay out one chunk document as the PDF writer does and measure it."""
    source, base, css, roots = job
    return measure_pages(render_html(source, base, roots, css).pages)


def measure_site(site: Path, workers: int) -> Measured:
    """Lay out the built site's whole body and measure every chunk, in workers processes."""
    book, options = Book.load(site), load_options(site)
    docs, base, css, roots = body_chunks(book, options, site, workers)
    total = Measured()
    with ProcessPoolExecutor(max_workers=workers, max_tasks_per_child=1) as pool:
        for part in pool.map(measure_chunk, [(d, base, css, roots) for d in docs]):
            total.tables += part.tables
            total.rows += part.rows
            total.page_height = max(total.page_height, part.page_height)
            total.tallest = max(total.tallest, part.tallest)
            total.tall_rows += part.tall_rows
            total.tables_across += part.tables_across
            total.split += part.split
    return total


def report(result: Measured, sources: dict[str, str]) -> tuple[list[str], list[str]]:
    """(summary lines, problem lines) for a measurement; sources maps a chapter slug to its Markdown path."""
    page, split = result.page_height or 1.0, sorted(result.split, key=lambda r: r.height)
    lines = [
        f"tables: {result.tables}, body rows: {result.rows}, rows split across pages: {len(split)}",
        f"tables on more than one page: {result.tables_across}; rows of a third of a page or more: {result.tall_rows}",
        f"page content height: {page:.1f} pt; a third: {page * THRESHOLD:.1f} pt; "
        f"tallest row: {result.tallest:.1f} pt ({result.tallest / page:.2f} of a page)",
    ]
    for row in split:
        marked = ", marked short" if row.short_marked else ""
        lines.append(
            f"  {row.height:6.1f} pt = {row.height / page:.2f} page in {len(row.pieces)} pieces{marked}: "
            f"{sources.get(row.chapter, row.chapter)}: {row.text}"
        )
    problems = [
        f"{sources.get(r.chapter, r.chapter)}:1: split-short-row: a row of {r.height:.0f} pt "
        f"({r.height / page:.2f} of a page) is split across pages: {r.text}"
        for r in split
        if r.height < page * THRESHOLD
    ]
    return lines, problems


def main(argv: list[str] | None = None) -> int:
    """Measure the built site given (default: site) and print the report; 1 when a short row is split."""
    parser = argparse.ArgumentParser(prog="python -m mlbook.tools.split_rows", description=__doc__.splitlines()[0])
    parser.add_argument("site", nargs="?", default="site", type=Path, help="the built site (make html)")
    parser.add_argument("--workers", type=int, default=2, help="layout processes (default 2)")
    args = parser.parse_args(argv)
    if not (args.site / "book.json").is_file():
        print(f"error: {args.site}/book.json not found; build the site first (make html)", file=sys.stderr)
        return 2
    book = Book.load(args.site)
    sources = {c.slug: c.source for c in book.pages()}
    lines, problems = report(measure_site(args.site.resolve(), args.workers), sources)
    print("\n".join(lines))
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
