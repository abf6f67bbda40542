"""Rendered PDF chunks on disk, keyed by a hash of everything a render reads, so a rebuild renders only changes."""

from __future__ import annotations

import hashlib
import pickle
import re
from pathlib import Path
from urllib.parse import unquote

import weasyprint

from .render import RENDER_SETTINGS, Rendered

FILE_URI = re.compile(r'src="file://([^"]+)"')
# Entries are pickled Rendered objects: where that class lives is part of the key, so moving it never
# makes an old entry unreadable (old entries are simply not used, and pruned).
FORMAT = f"{Rendered.__module__}.{Rendered.__qualname__}"


class ChunkCache:
    """Rendered chunks on disk, keyed by a hash of everything the render reads; unused entries are pruned."""

    def __init__(self, folder: str) -> None:
        self.folder = Path(folder) if folder else None
        self.used: set[str] = set()

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
