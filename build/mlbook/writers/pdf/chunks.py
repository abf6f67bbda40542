"""Parallel PDF rendering: the book in contiguous chunks, rendered by worker processes, assembled into one PDF.

Page numbers, the table of contents and links that cross chunks are resolved after rendering: each worker returns
its pages' anchors and bookmarks; the parent computes the final page of every anchor, renders the front matter
with the real page numbers, rewrites cross-chunk links to named destinations, stamps page numbers from a small
overlay document, and rebuilds the outline Part > Chapter > section with the levels from the stylesheet.
"""

from __future__ import annotations

import gc
import math
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from lxml import html as lhtml

from ...book import Book
from ...options import Options
from ..styles import STYLES, pdf_css
from .assemble import XREF, Assembler
from .cache import ChunkCache
from .combine import body_sections, html_document
from .numbering import front_html, overlay_html, page_label
from .render import Rendered, render_chunk

CHUNK_BYTES = 150_000  # HTML per chunk: about 45 pages of the book
# Page numbers come from the overlay: no page style of the chunks prints one.
CHUNK_CSS = "@page { @bottom-center { content: none; } } @page front { @bottom-center { content: none; } }"


def plan(sections: list[lhtml.HtmlElement], chunks: int) -> list[list[lhtml.HtmlElement]]:
    """Split the sections, in order, into at most `chunks` contiguous groups of similar HTML size."""
    sizes = [len(lhtml.tostring(s)) for s in sections]
    target = sum(sizes) / max(1, chunks)
    groups, current, size = [], [], 0
    for section, n in zip(sections, sizes, strict=True):
        if current and size + n / 2 > target and len(groups) < chunks - 1:
            groups.append(current)
            current, size = [], 0
        current.append(section)
        size += n
    return [*groups, current] if current else groups


def _link_across(groups: list[list[lhtml.HtmlElement]]) -> None:
    """Point every in-document link whose target lies in another group at the XREF placeholder."""
    owner = {}
    for g, group in enumerate(groups):
        for section in group:
            for el in section.iter():
                if isinstance(el.tag, str) and el.get("id"):
                    owner[el.get("id")] = g
    for g, group in enumerate(groups):
        for section in group:
            for a in section.iter("a"):
                href = a.get("href") or ""
                if href.startswith("#") and owner.get(href[1:], g) != g:
                    a.set("href", XREF + href[1:])


def render_all(pool, jobs: list[tuple], cache: ChunkCache) -> list[Rendered]:
    """Render the jobs in the pool, taking unchanged ones from the cache; results in job order."""
    results: list[Rendered | None] = [cache.get(job) for job in jobs]
    todo = [i for i, r in enumerate(results) if r is None]
    for i, result in zip(todo, pool.map(render_chunk, [jobs[i] for i in todo]), strict=True):
        cache.put(jobs[i], result)
        results[i] = result
    return results


def body_chunks(book: Book, options: Options, site_dir: Path, workers: int) -> tuple[list[str], str, str, list[str]]:
    """The book's body as the chunk documents write_chunked renders: (HTML of each chunk, base URL, CSS, roots)."""
    site_dir = Path(site_dir).resolve()
    sections = body_sections(book, options, site_dir)
    total = sum(len(lhtml.tostring(s)) for s in sections)
    # Small chunks keep each worker's memory low (WeasyPrint holds a chunk's whole layout) and balance the load.
    groups = plan(sections, max(workers * 3, math.ceil(total / CHUNK_BYTES)))
    _link_across(groups)
    base, roots = site_dir.as_uri() + "/", [str(site_dir), str(STYLES)]
    return [html_document(g, options) for g in groups], base, pdf_css() + "\n" + CHUNK_CSS, roots


def write_chunked(book: Book, options: Options, site_dir: Path, out: Path, workers: int) -> tuple[bytes, int]:
    """Render the book in parallel and return (PDF bytes, page count); raise ValueError on any problem."""
    site_dir = Path(site_dir).resolve()
    ident, epoch = options.identifier.encode(), options.epoch
    body, base, css, roots = body_chunks(book, options, site_dir, workers)
    jobs = [(front_html(book, options, None), base, css, roots, ident, epoch)]
    jobs += [(source, base, css, roots, ident, epoch) for source in body]
    # The parsed book is no longer needed: free it before the workers start, so the parent stays small.
    del body
    gc.collect()
    cache = ChunkCache(options.cache_dir)
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["weasyprint", "mlbook.writers.pdf.render"])  # each fresh worker starts with them
    # A fresh worker per chunk returns each chunk's memory to the system (max_tasks_per_child).
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx, max_tasks_per_child=1) as pool:
        chunks = render_all(pool, jobs, cache)
        problems = sorted({p for c in chunks for p in c.problems if "mlbook.invalid" not in p})
        if problems:
            raise ValueError("; ".join(problems))
        front_pages = chunks[0].pages
        page_of, offset = {}, 0
        for chunk in chunks:
            for name, index in chunk.anchors.items():
                page_of[name] = str(offset + index + 1)
            offset += chunk.pages
        front = render_all(pool, [(front_html(book, options, page_of), base, css, roots, ident, epoch)], cache)[0]
        if front.pages != front_pages:
            raise ValueError(f"the contents changed length once numbered ({front_pages} -> {front.pages} pages)")
        chunks[0] = front
        labels = [page_label(i, front_pages) for i in range(offset)]
        starts = [sum(c.pages for c in chunks[:i]) for i in range(len(chunks))]
        overlay_jobs = [
            (overlay_html(labels[a : a + c.pages], options), base, "", roots, ident, epoch)
            for a, c in zip(starts, chunks, strict=True)
        ]
        numbers = render_all(pool, overlay_jobs, cache)
    cache.prune()
    assembler = Assembler(chunks)
    assembler.resolve_links()
    assembler.stamp([n.pdf for n in numbers])
    assembler.outline()
    assembler.metadata(options)
    return assembler.to_bytes(), offset


def default_workers() -> int:
    """Worker processes for the PDF: one per CPU the process may use, at most 4 (memory per worker ~150 MB)."""
    return max(1, min(4, len(os.sched_getaffinity(0))))
