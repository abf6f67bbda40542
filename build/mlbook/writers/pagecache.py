"""One page's converted text from the last build, reused while the page and what its conversion reads are unchanged.

After an edit to one chapter the site's other pages are the same bytes as before, so a writer that converts each
page on its own (the Markdown export) converts only the edited page again. The key covers the page's built HTML,
the chapter's entry of the book model, the options (the cache's folder left out) and the pipeline's code and
installed packages (reuse.environment). Stored as ``<folder>/<key>.txt``; entries a build did not use are pruned.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from pathlib import Path

from ..book import Chapter
from ..options import Options
from .keyedfiles import KeyedFiles
from .reuse import environment


def page_key(kind: str, chapter: Chapter, page_bytes: bytes, options: Options) -> str:
    """sha256 of the conversion's name, the chapter's model entry, the options, the page's HTML and the pipeline."""
    settings = {k: v for k, v in options.to_dict().items() if k != "cache_dir"}
    h = hashlib.sha256(environment())
    h.update(json.dumps([kind, asdict(chapter), settings], sort_keys=True).encode() + b"\0")
    h.update(page_bytes)
    return h.hexdigest()


class PageCache(KeyedFiles):
    """Converted pages on disk by key (nothing stored or found when folder is empty)."""

    def __init__(self, folder: str | Path) -> None:
        super().__init__(folder, ".txt")

    def get(self, key: str) -> str | None:
        """The stored text of the key, or None."""
        data = self.read(key)
        return None if data is None else data.decode("utf-8", errors="replace")

    def put(self, key: str, text: str) -> None:
        """Store the text under the key."""
        self.write(key, text.encode("utf-8"))


def folder(options: Options, name: str) -> str:
    """Where a writer's converted pages are kept: ``<name>/`` beside the PDF chunk cache ('' when no cache)."""
    return str(Path(options.cache_dir).with_name(name)) if options.cache_dir else ""
