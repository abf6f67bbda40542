"""The registry of downloadable editions: each format is one module with write(book, options, site_dir, out)."""

from __future__ import annotations

import importlib
import logging
import time
from pathlib import Path

from .. import options as saved_options
from ..book import Book
from ..options import Options

# format -> (module, file suffix). Adding a format is one module and one line here.
WRITERS = {"pdf": ("mlbook.writers.pdf", ".pdf"), "epub": ("mlbook.writers.epub", ".epub")}

LOG = logging.getLogger("mkdocs.plugins.mlbook")


def output_path(site_dir: Path, options: Options, fmt: str) -> Path:
    """Where an edition is written: ``<site>/downloads/<output_name><suffix>``."""
    return Path(site_dir) / "downloads" / f"{options.output_name}{WRITERS[fmt][1]}"


def write_all(book: Book, options: Options, site_dir: Path) -> dict[str, dict]:
    """Write every format in options.formats; return per format its path, size in bytes, count and seconds.

    Errors from a writer propagate; the previous file of that format stays in place.
    """
    results = {}
    for fmt in options.formats:
        module = importlib.import_module(WRITERS[fmt][0])
        out = output_path(site_dir, options, fmt)
        start = time.perf_counter()
        count = module.write(book, options, Path(site_dir), out)
        seconds = time.perf_counter() - start
        results[fmt] = {"path": str(out), "bytes": out.stat().st_size, "count": count, "seconds": seconds}
        LOG.info(
            "mlbook: wrote %s (%d bytes, %s) in %.1f s",
            out,
            out.stat().st_size,
            f"{count} pages" if fmt == "pdf" else f"{count} chapters",
            seconds,
        )
    return results


def save_model(book: Book, options: Options, site_dir: Path) -> None:
    """Write ``book.json`` and ``options.json`` into the site so the command line can rerun the writers."""
    Path(site_dir, "book.json").write_text(book.to_json(), encoding="utf-8")
    saved_options.save(options, site_dir)


def load_options(site_dir: Path) -> Options:
    """Read the options saved by save_model."""
    return saved_options.load(site_dir)
