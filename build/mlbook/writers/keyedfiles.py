"""Files in one folder named by a key: what the PDF chunk cache and the per-page cache of the Markdown export share.

Each build marks the keys it reads or writes; prune() then deletes the rest, so the folder holds only what the
last build used. A file is written under a temporary name and renamed, so a reader never sees half of one.
"""

from __future__ import annotations

from pathlib import Path


class KeyedFiles:
    """Bytes by key in ``<folder>/<key><suffix>``; with an empty folder nothing is stored or found."""

    def __init__(self, folder: str | Path, suffix: str) -> None:
        self.folder = Path(folder) if folder else None
        self.suffix = suffix
        self.used: set[str] = set()

    def read(self, key: str) -> bytes | None:
        """The stored bytes of the key (marked used), or None when there are none."""
        if self.folder is None:
            return None
        self.used.add(key)
        try:
            return (self.folder / f"{key}{self.suffix}").read_bytes()
        except OSError:
            return None

    def write(self, key: str, data: bytes) -> None:
        """Store data under the key (marked used)."""
        if self.folder is None:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        self.used.add(key)
        tmp = self.folder / f"{key}.tmp"
        tmp.write_bytes(data)
        tmp.replace(self.folder / f"{key}{self.suffix}")

    def prune(self) -> None:
        """Delete every entry this build did not use."""
        if self.folder is not None and self.folder.is_dir():
            for path in self.folder.glob(f"*{self.suffix}"):
                if path.stem not in self.used:
                    path.unlink()
