"""An edition's files from the last build, reused when nothing the edition reads has changed.

A rebuild with no change to the book then copies the PDF, EPUB, chapter PDFs and Markdown export instead of
writing them again. The key covers everything a writer can read: the edition and the options, the book model,
every file of the built site except the editions' own outputs and what no writer reads (the search index, the
sitemap), the files of the editions it needs (the chapter PDFs read the book PDF), the pipeline's own code and
stylesheets, and the name and version of every installed package. Fonts are not in the key (as for the PDF
chunk cache): after installing or changing fonts, delete `.cache/`. Stored under ``<folder>/<edition>/``: the
outputs and ``meta.json`` (the key and the writer's count); only the last build of each edition is kept.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import shutil
from pathlib import Path

from ..book import Book
from ..options import Options
from .outputs import atomic_path
from .registry import Format

PACKAGE = Path(__file__).resolve().parents[1]  # build/mlbook: the writers, the HTML preparation, the stylesheets
NOT_READ = ("search/", "sitemap.xml")  # site paths (prefixes) that no writer reads


@functools.cache
def environment() -> bytes:
    """Digest of the pipeline's source and stylesheets and of every installed package's name and version."""
    h = hashlib.sha256()
    for path in sorted(PACKAGE.rglob("*")):
        if path.is_file() and path.suffix != ".pyc":
            h.update(path.relative_to(PACKAGE).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    versions = sorted(f"{d.metadata['Name']}=={d.version}" for d in importlib.metadata.distributions())
    h.update("\n".join(versions).encode())
    return h.digest()


def site_digests(site_dir: Path, skip: set[str]) -> dict[str, str]:
    """sha256 of every file of the built site by site path, except the paths in skip and NOT_READ."""
    site_dir = Path(site_dir)
    out = {}
    for path in sorted(site_dir.rglob("*")):
        rel = path.relative_to(site_dir).as_posix()
        if path.is_file() and rel not in skip and not rel.startswith(NOT_READ):
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def key(fmt: Format, book: Book, options: Options, site: dict[str, str], needed: list[Path]) -> str:
    """The edition's key: site is site_digests of the built site, needed the files of the editions it needs."""
    h = hashlib.sha256(environment())
    settings = {k: v for k, v in options.to_dict().items() if k != "cache_dir"}  # where caches live is no input
    h.update(json.dumps([fmt.name, settings], sort_keys=True).encode() + b"\0" + book.to_json().encode())
    h.update(json.dumps(site, sort_keys=True).encode())
    for path in needed:
        h.update(path.read_bytes() if path.is_file() else b"missing")
    return h.hexdigest()


class Reuse:
    """The last build's outputs of each edition under folder (none stored or reused when folder is empty)."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder) if folder else None

    def restore(self, fmt: Format, key: str, paths: dict[str, Path]) -> int | None:
        """Copy the stored outputs (output key -> destination) into place and return the count; None if stale."""
        if self.folder is None:
            return None
        meta = self.folder / fmt.name / "meta.json"
        try:
            saved = json.loads(meta.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        stored = {k: self.folder / fmt.name / f"{i}.out" for i, k in enumerate(sorted(paths))}
        if saved.get("key") != key or sorted(saved.get("outputs", [])) != sorted(paths):
            return None
        if not all(p.is_file() for p in stored.values()):
            return None
        for k, dest in paths.items():
            with atomic_path(dest) as tmp:
                shutil.copyfile(stored[k], tmp)
        return int(saved["count"])

    def store(self, fmt: Format, key: str, paths: dict[str, Path], count: int) -> None:
        """Keep copies of the outputs just written (output key -> path) under this key, replacing the last ones."""
        if self.folder is None:
            return
        folder = self.folder / fmt.name
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        for i, k in enumerate(sorted(paths)):
            shutil.copyfile(paths[k], folder / f"{i}.out")
        # meta.json last: a store interrupted before it leaves an entry that is never reused.
        meta = {"key": key, "count": count, "outputs": sorted(paths)}
        (folder / "meta.json").write_text(json.dumps(meta, indent=1), encoding="utf-8")
