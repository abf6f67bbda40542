"""Rendered PDF chunks on disk, keyed by a hash of everything a render reads, so a rebuild renders only changes."""

from __future__ import annotations

import hashlib
import pickle
import re
from pathlib import Path
from urllib.parse import unquote

import weasyprint

from ..keyedfiles import KeyedFiles
from .render import RENDER_SETTINGS, Rendered

FILE_URI = re.compile(r'src="file://([^"]+)"')
# Entries are pickled Rendered objects: where that class lives is part of the key, so moving it never
# makes an old entry unreadable (old entries are simply not used, and pruned).
FORMAT = f"{Rendered.__module__}.{Rendered.__qualname__}"


class ChunkCache(KeyedFiles):
    """Rendered chunks on disk, keyed by a hash of everything the render reads; unused entries are pruned."""

    def __init__(self, folder: str) -> None:
        super().__init__(folder, ".pickle")

    def key(self, job: tuple) -> str:
        """sha256 of the job (HTML, CSS, roots, identifier, epoch), embedded files, WeasyPrint version, settings."""
        source, base_url, css, roots, identifier, epoch = job
        h = hashlib.sha256(
            "\0".join(
                [source, base_url, css, *roots, str(epoch), weasyprint.__version__, FORMAT, RENDER_SETTINGS]
            ).encode()
        )
        h.update(identifier)
        for uri in sorted(set(FILE_URI.findall(source))):
            path = Path(unquote(uri))
            h.update(path.read_bytes() if path.is_file() else b"missing")
        return h.hexdigest()

    def get(self, job: tuple) -> Rendered | None:
        """The cached result of the job, or None."""
        data = self.read(self.key(job)) if self.folder is not None else None
        return pickle.loads(data) if data is not None else None

    def put(self, job: tuple, result: Rendered) -> None:
        """Store a clean result (one with problems is never cached)."""
        if self.folder is not None and not result.problems:
            self.write(self.key(job), pickle.dumps(result))
