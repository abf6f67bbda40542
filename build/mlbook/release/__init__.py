"""The release set (`make dist`): everything a deployer publishes, in one folder, from an already built site.

From the editions of writers.FORMATS that the build wrote: each whole-book file under a name that carries the
edition (``ml-engineering-book-v1.0.pdf``), an edition whose Format.release is "bundle" as one zip (the chapter
PDFs), the other outputs under their own names (``llms.txt``); then the site as a tarball for a static host and
SHA256SUMS. The folder is written beside its final place and swapped in whole, so a failed run leaves the last one.
"""

from __future__ import annotations

import posixpath
import re
import shutil
from pathlib import Path

from .. import stage, writers
from ..book import Book
from ..options import Options
from . import archives, checksums

UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")  # what an edition string may not put into a file name


class ReleaseError(Exception):
    """A release cannot be made; the message is one line, ``path:line: kind: detail``."""


def stem(options: Options) -> str:
    """``<output_name>-<edition>``, the edition safe for a file name (``commit 0486e5d1a2``: ``commit-0486e5d1a2``)."""
    return f"{options.output_name}-{UNSAFE.sub('-', options.edition).strip('-') or 'draft'}"


def release_name(options: Options, path: str) -> str:
    """The name of an edition's file in the release: the edition after the book's file name stem, if it has it."""
    base = posixpath.basename(path)
    return stem(options) + base[len(options.output_name) :] if base.startswith(options.output_name) else base


def make(site: Path, out: Path) -> list[str]:
    """Write the release set of the built site into out (replacing it); return the names written, sorted.

    Raises ReleaseError when the site is not built or an edition it offers was not written.
    """
    site, out = Path(site), Path(out)
    for name in ("book.json", "options.json"):
        if not (site / name).is_file():
            raise ReleaseError(f"{site / name}:1: missing file: the site is not built; run make book first")
    book, options = Book.load(site), writers.load_options(site)
    staging = out.with_name(f".{out.name}.staging")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        for fmt in writers.configured(options):
            if not fmt.skipped(options):
                _add_edition(fmt, book, options, site, staging)
        archives.tar_gz(site, staging / f"{stem(options)}-site.tar.gz", stem(options), options.epoch)
        checksums.write(staging)
        stage.swap(staging, out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return sorted(p.name for p in out.iterdir())


def _add_edition(fmt, book: Book, options: Options, site: Path, folder: Path) -> None:
    """Copy (or bundle) one edition's files from the site into the release folder."""
    files = []
    for output in fmt.outputs(book, options):
        path = site / output.path
        if not path.is_file():
            raise ReleaseError(f"{path}:1: missing edition: the {fmt.title} was not written; run make book first")
        files.append((output.path, path))
    if fmt.release == "bundle":
        named = [(posixpath.basename(p), path) for p, path in files]
        archives.zip_files(named, folder / f"{stem(options)}-{fmt.name}.zip", options.epoch)
        return
    for site_path, path in files:
        shutil.copyfile(path, folder / release_name(options, site_path))
