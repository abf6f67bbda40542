"""Parallel PDF rendering: the book in contiguous chunks, rendered by worker processes, assembled into one PDF.

Page numbers, the table of contents and links that cross chunks are resolved after rendering: each worker returns
its pages' anchors and bookmarks; the parent computes the final page of every anchor, renders the front matter
with the real page numbers, rewrites cross-chunk links to named destinations, stamps page numbers from a small
overlay document, and rebuilds the outline Part > Chapter > section with the levels from the stylesheet.
"""

from __future__ import annotations

import gc
import hashlib
import io
import logging
import math
import multiprocessing
import os
import pickle
import re
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

from lxml import html as lhtml
from lxml.html import builder as E

from . import combine
from .book import Book
from .config import Options
from .provenance import as_datetime

XREF = "https://mlbook.invalid/xref/"  # placeholder target of a link into another chunk; never fetched
FILE_URI = re.compile(r'src="file://([^"]+)"')
CHUNK_BYTES = 150_000  # HTML per chunk: about 45 pages of the book
PX_TO_PT = 0.75  # WeasyPrint positions are CSS px (1/96 in); PDF user space is points (1/72 in)
# Page numbers come from the overlay: no page style of the chunks prints one.
CHUNK_CSS = "@page { @bottom-center { content: none; } } @page front { @bottom-center { content: none; } }"


@dataclass
class Rendered:
    """What a worker sends back for one chunk (plain data, so it pickles)."""

    pdf: bytes
    pages: int
    anchors: dict[str, int] = field(default_factory=dict)  # anchor -> page index in the chunk (first occurrence)
    bookmarks: list[tuple[int, int, str, float, float]] = field(default_factory=list)  # page, level, label, x, y
    problems: list[str] = field(default_factory=list)


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


def render(job: tuple[str, str, str, list[str], bytes]) -> Rendered:
    """Worker: render one chunk's HTML with WeasyPrint and collect its anchors, bookmarks and warnings."""
    from weasyprint import CSS, HTML

    from .pdf import _Collect, _fetcher_class

    source, base_url, css, roots, identifier = job
    # Fewer collector passes: they cost ~15-20% of render time; cycles are still collected, so memory stays bounded.
    gc.set_threshold(50_000, 50, 100)
    fetcher = _fetcher_class()([Path(r) for r in roots])
    collect = _Collect()
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


class ChunkCache:
    """Rendered chunks on disk, keyed by a hash of everything the render reads; unused entries are pruned."""

    def __init__(self, folder: str) -> None:
        self.folder = Path(folder) if folder else None
        self.used: set[str] = set()

    def key(self, job: tuple) -> str:
        """sha256 of the job (HTML, CSS, roots, identifier), the files it embeds, and WeasyPrint's version."""
        import weasyprint

        source, base_url, css, roots, identifier = job
        h = hashlib.sha256("\0".join([source, base_url, css, *roots, weasyprint.__version__]).encode())
        h.update(identifier)
        for uri in sorted(set(FILE_URI.findall(source))):
            path = Path(unquote(uri))
            h.update(path.read_bytes() if path.is_file() else b"missing")
        return h.hexdigest()

    def get(self, job: tuple) -> Rendered | None:
        """The cached result of the job, or None."""
        if self.folder is None:
            return None
        key = self.key(job)
        self.used.add(key)
        path = self.folder / f"{key}.pickle"
        return pickle.loads(path.read_bytes()) if path.is_file() else None

    def put(self, job: tuple, result: Rendered) -> None:
        """Store a clean result (one with problems is never cached)."""
        if self.folder is None or result.problems:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        key = self.key(job)
        self.used.add(key)
        tmp = self.folder / f"{key}.tmp"
        tmp.write_bytes(pickle.dumps(result))
        tmp.replace(self.folder / f"{key}.pickle")

    def prune(self) -> None:
        """Delete every entry this build did not use."""
        if self.folder is not None and self.folder.is_dir():
            for path in self.folder.glob("*.pickle"):
                if path.stem not in self.used:
                    path.unlink()


def render_all(pool, jobs: list[tuple], cache: ChunkCache) -> list[Rendered]:
    """Render the jobs in the pool, taking unchanged ones from the cache; results in job order."""
    results: list[Rendered | None] = [cache.get(job) for job in jobs]
    todo = [i for i, r in enumerate(results) if r is None]
    for i, result in zip(todo, pool.map(render, [jobs[i] for i in todo]), strict=True):
        cache.put(jobs[i], result)
        results[i] = result
    return results


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
    toc = combine.toc(book)
    for a in toc.iter("a"):
        a.set("data-page", (page_of or {}).get(a.get("href", "#")[1:], "000"))
        a.set("href", XREF + a.get("href", "#")[1:])
    return combine.html_document([*combine.front_matter(options), toc], options)


class Assembler:
    """Joins rendered chunks into one PDF with pypdf: links, page numbers, outline and metadata."""

    def __init__(self, chunks: list[Rendered]) -> None:
        from pypdf import PdfReader, PdfWriter

        self.writer = PdfWriter()
        self.offsets = []
        for chunk in chunks:
            self.offsets.append(len(self.writer.pages))
            self.writer.append(PdfReader(io.BytesIO(chunk.pdf)), import_outline=False)
        self.chunks = chunks

    def resolve_links(self) -> None:
        """Turn XREF placeholder URI links into GoTo actions to the named destination of the anchor."""
        from pypdf.generic import DictionaryObject, NameObject, TextStringObject

        names = set(self.writer.named_destinations)
        missing = []
        for page in self.writer.pages:
            for ref in page.get("/Annots") or []:
                annot = ref.get_object()
                action = annot.get("/A")
                uri = str(action.get("/URI", "")) if action is not None else ""
                if not uri.startswith(XREF):
                    continue
                name = uri[len(XREF) :]
                if name not in names:
                    missing.append(name)
                annot[NameObject("/A")] = DictionaryObject(
                    {NameObject("/S"): NameObject("/GoTo"), NameObject("/D"): TextStringObject(name)}
                )
        if missing:
            raise ValueError(f"links to anchors that no chunk defines: {', '.join(sorted(set(missing))[:10])}")

    def stamp(self, overlays: list[bytes]) -> None:
        """Merge each chunk's page-number overlay onto its pages."""
        from pypdf import PdfReader

        numbers = [page for pdf in overlays for page in PdfReader(io.BytesIO(pdf)).pages]
        for page, overlay in zip(self.writer.pages, numbers, strict=True):
            page.merge_page(overlay)
            page.compress_content_streams()  # merging leaves the page's content uncompressed

    def outline(self) -> None:
        """Rebuild the bookmarks from every chunk's (level, label, position), nested by level."""
        from pypdf.generic import Fit

        stack: list[tuple[int, object]] = []
        for chunk, offset in zip(self.chunks, self.offsets, strict=True):
            for index, level, label, x, y in chunk.bookmarks:
                page = offset + index
                height = float(self.writer.pages[page].mediabox.height)
                while stack and stack[-1][0] >= level:
                    stack.pop()
                parent = stack[-1][1] if stack else None
                item = self.writer.add_outline_item(
                    label, page, parent=parent, fit=Fit.xyz(left=x * PX_TO_PT, top=height - y * PX_TO_PT)
                )
                stack.append((level, item))

    def metadata(self, options: Options) -> None:
        """Title, author, subject, keywords, language, dates and a fixed file identifier."""
        from pypdf.generic import ArrayObject, ByteStringObject, NameObject, TextStringObject

        stamp = as_datetime(options.epoch).strftime("D:%Y%m%d%H%M%SZ")
        self.writer.add_metadata(
            {
                "/Title": options.title,
                "/Author": options.author,
                "/Subject": options.subtitle,
                "/Keywords": ", ".join(options.keywords),
                "/Creator": "mlbook",
                "/Producer": "mlbook (WeasyPrint, pypdf)",
                "/CreationDate": stamp,
                "/ModDate": stamp,
            }
        )
        self.writer._root_object[NameObject("/Lang")] = TextStringObject(options.language)
        ident = ByteStringObject(options.identifier.encode("utf-8"))
        self.writer._ID = ArrayObject([ident, ident])


def write_chunked(book: Book, options: Options, site_dir: Path, out: Path, workers: int) -> tuple[bytes, int]:
    """Render the book in parallel and return (PDF bytes, page count); raise ValueError on any problem."""
    from .pdf import STYLES, stylesheet

    site_dir = Path(site_dir).resolve()
    sections = combine.body_sections(book, options, site_dir)
    total = sum(len(lhtml.tostring(s)) for s in sections)
    # Small chunks keep each worker's memory low (WeasyPrint holds a chunk's whole layout) and balance the load.
    groups = plan(sections, max(workers * 3, math.ceil(total / CHUNK_BYTES)))
    _link_across(groups)
    base, roots, ident = site_dir.as_uri() + "/", [str(site_dir), str(STYLES)], options.identifier.encode()
    css = stylesheet() + "\n" + CHUNK_CSS
    jobs = [(front_html(book, options, None), base, css, roots, ident)]
    jobs += [(combine.html_document(g, options), base, css, roots, ident) for g in groups]
    # The parsed book is no longer needed: free it before the workers start, so the parent stays small.
    del sections, groups
    gc.collect()
    cache = ChunkCache(options.cache_dir)
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["weasyprint", "mlbook.pdf"])  # each fresh worker starts with them imported
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
        front = render_all(pool, [(front_html(book, options, page_of), base, css, roots, ident)], cache)[0]
        if front.pages != front_pages:
            raise ValueError(f"the contents changed length once numbered ({front_pages} -> {front.pages} pages)")
        chunks[0] = front
        labels = [page_label(i, front_pages) for i in range(offset)]
        starts = [sum(c.pages for c in chunks[:i]) for i in range(len(chunks))]
        overlay_jobs = [
            (overlay_html(labels[a : a + c.pages], options), base, "", roots, ident)
            for a, c in zip(starts, chunks, strict=True)
        ]
        numbers = render_all(pool, overlay_jobs, cache)
    cache.prune()
    assembler = Assembler(chunks)
    assembler.resolve_links()
    assembler.stamp([n.pdf for n in numbers])
    assembler.outline()
    assembler.metadata(options)
    buf = io.BytesIO()
    assembler.writer.write(buf)
    return buf.getvalue(), offset


def default_workers() -> int:
    """Worker processes for the PDF: one per CPU the process may use, at most 4 (memory per worker ~150 MB)."""
    return max(1, min(4, len(os.sched_getaffinity(0))))


__all__ = ["E", "Rendered", "default_workers", "plan", "write_chunked"]
