"""The editions: FORMATS, the one registry that the theme, the pages, the summary and the command line read.

Adding an edition is one writer module with ``write(book, options, site_dir, out_dir) -> int`` and one entry here.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from .. import options as saved_options
from ..book import Book
from ..options import Options
from . import reuse
from .registry import Argument, Format, Output, chapter_pdfs, markdown_export, whole_book

FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format(
            "pdf",
            "mlbook.writers.pdf",
            "PDF",
            "for reading offline and printing (A4)",
            "pages",
            whole_book(".pdf", "application/pdf"),
            arguments=(Argument("--variant", "pdf_variant", "write a tagged, accessible PDF", ("pdf/ua-1",)),),
        ),
        Format(
            "epub",
            "mlbook.writers.epub",
            "EPUB",
            "for e-readers, phones and tablets",
            "documents",
            whole_book(".epub", "application/epub+zip"),
        ),
        Format(
            "chapters",
            "mlbook.writers.chapters",
            "Chapter PDFs",
            "one chapter at a time, with the book's page numbers",
            "files",
            chapter_pdfs,
            needs=("pdf",),
            skipped=lambda options: "a tagged pdf/ua-1 PDF cannot be cut into chapters" if options.pdf_variant else "",
            release="bundle",
        ),
        Format(
            "llms",
            "mlbook.writers.llms",
            "Markdown",
            "for language models and agents (the llms.txt convention)",
            "pages",
            markdown_export,
        ),
    )
}

LOG = logging.getLogger("mkdocs.plugins.mlbook")


def configured(options: Options) -> list[Format]:
    """The editions options.formats names, in registry order (an edition is written after those it needs)."""
    return [f for name, f in FORMATS.items() if name in options.formats]


def unmet_needs(names: list[str]) -> list[str]:
    """One sentence per named edition that needs another edition missing from names."""
    return [
        f"'{name}' needs '{need}' (it reads that edition's file); add '{need}' or remove '{name}'"
        for name in names
        for need in FORMATS[name].needs
        if need not in names
    ]


def offers(book: Book, options: Options, place: str) -> list[tuple[Format, Output]]:
    """(edition, output) for every output offered at place (registry.PLACES) by the configured editions.

    An edition that is not configured, or that these options skip, offers nothing anywhere.
    """
    return [
        (f, o)
        for f in configured(options)
        if not f.skipped(options)
        for o in f.outputs(book, options)
        if place in o.offered
    ]


def planned_paths(book: Book, options: Options) -> set[str]:
    """Site paths of every file the configured editions will write (links to them are valid before they exist)."""
    return {o.path for f in configured(options) if not f.skipped(options) for o in f.outputs(book, options)}


def write_all(book: Book, options: Options, site_dir: Path, out_dir: Path | None = None) -> dict[str, dict]:
    """Write every configured edition under out_dir (default: the site); return per edition what it wrote.

    Each result holds count, unit, bytes (all its files), seconds, sizes (output key -> bytes), paths, reused
    (True when the last build's files were copied, nothing the edition reads having changed) and skipped (the
    reason it wrote nothing, else ''). Errors from a writer propagate; earlier files stay in place.
    """
    out_dir = Path(out_dir or site_dir)
    site = site_inputs(book, options, Path(site_dir)) if reuse_folder(options) else None
    return {f.name: write_one(f, book, options, Path(site_dir), out_dir, site) for f in configured(options)}


def site_inputs(book: Book, options: Options, site_dir: Path) -> dict[str, str]:
    """Digests of the built site's files that a writer may read (every edition's own outputs left out)."""
    outputs = {o.path for f in FORMATS.values() for o in f.outputs(book, options)}
    return reuse.site_digests(site_dir, outputs)


def reuse_folder(options: Options) -> str:
    """Where the last build's editions are kept: ``editions/`` beside the PDF chunk cache ('' when no cache)."""
    return str(Path(options.cache_dir).with_name("editions")) if options.cache_dir else ""


def write_one(
    fmt: Format, book: Book, options: Options, site_dir: Path, out_dir: Path, site: dict[str, str] | None = None
) -> dict:
    """Write one edition (or skip it with its reason, or reuse the last build's files) and log what it wrote.

    site: the site_inputs digests of the built site; without them the edition is always written (the command
    line reruns one writer on purpose), with them and a cache folder the last build's files are reused when
    nothing the edition reads changed.
    """
    reason = fmt.skipped(options)
    if reason:
        LOG.info("mlbook: %s not written: %s", fmt.title, reason)
        empty = {"count": 0, "bytes": 0, "seconds": 0.0, "sizes": {}, "paths": [], "reused": False}
        return {"title": fmt.title, "unit": fmt.unit, **empty, "skipped": reason}
    start = time.perf_counter()
    paths = {o.key: out_dir / o.path for o in fmt.outputs(book, options)}
    kept, key, count = reuse.Reuse(reuse_folder(options)), "", None
    if kept.folder is not None and site is not None:
        key = reuse.key(fmt, book, options, site, _needed(fmt, book, options, site_dir, out_dir))
        count = kept.restore(fmt, key, paths)
    reused = count is not None
    if count is None:
        count = fmt.write(book, options, site_dir, out_dir)
        if key:
            kept.store(fmt, key, paths, count)
    seconds = time.perf_counter() - start
    sizes = {k: path.stat().st_size for k, path in paths.items()}
    where = str(next(iter(paths.values()))) if len(paths) == 1 else f"{len(paths)} files"
    how = "reused (nothing it reads changed)" if reused else "wrote"
    LOG.info("mlbook: %s %s (%d bytes, %d %s) in %.1f s", how, where, sum(sizes.values()), count, fmt.unit, seconds)
    return {
        "title": fmt.title,
        "count": count,
        "unit": fmt.unit,
        "bytes": sum(sizes.values()),
        "seconds": seconds,
        "sizes": sizes,
        "paths": [str(p) for p in paths.values()],
        "reused": reused,
        "skipped": "",
    }


def _needed(fmt: Format, book: Book, options: Options, site_dir: Path, out_dir: Path) -> list[Path]:
    """The files of the editions fmt needs, where its writer reads them (out_dir first, else the site)."""
    files = []
    for need in fmt.needs:
        for o in FORMATS[need].outputs(book, options):
            files.append(out_dir / o.path if (out_dir / o.path).is_file() else site_dir / o.path)
    return files


def save_model(book: Book, options: Options, site_dir: Path) -> None:
    """Write ``book.json`` and ``options.json`` into the site so the command line can rerun the writers."""
    Path(site_dir, "book.json").write_text(book.to_json(), encoding="utf-8")
    saved_options.save(options, site_dir)


def load_options(site_dir: Path) -> Options:
    """Read the options saved by save_model."""
    return saved_options.load(site_dir)
