"""Results of chapters whose inputs are unchanged since a run in which every block passed.

A second ``make test`` then re-runs only the chapters that changed.  The key is a SHA-256 over
everything a chapter's run reads: the chapter, the runbook data when the chapter renders it, every
file of ``scripts/`` (the sandbox copies them all), the runner and its fakes (``tests/bookblocks``,
``tests/fakes``), the test SLURM's set-up, the Python version and every installed distribution's version.
A chapter taken from the cache is counted in the summary line, never skipped silently;
``BOOKBLOCKS_CACHE=0`` runs every chapter.  A fresh clone (CI) has no cache and runs everything.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import sys
from functools import cache
from pathlib import Path

from bookblocks.collect import RUNBOOK, renders_runbook

REPO = Path(__file__).resolve().parents[2]
FOLDER = REPO / ".cache" / "tests" / "book-blocks"
# Shared inputs, relative to the repository: folders hashed file by file, in sorted order.
SHARED = ("scripts", "tests/bookblocks", "tests/fakes", "tests/test_slurm.py", "tests/conftest.py")


def enabled() -> bool:
    """False when ``BOOKBLOCKS_CACHE=0`` asks for every chapter to run."""
    return os.environ.get("BOOKBLOCKS_CACHE", "1") != "0"


@cache
def _shared_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for name in SHARED:
        path = root / name
        files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        for file in files:
            if "__pycache__" in file.parts or not file.exists():
                continue
            digest.update(file.relative_to(root).as_posix().encode() + b"\0" + file.read_bytes() + b"\0")
    installed = sorted(f"{d.metadata['Name']}=={d.version}" for d in importlib.metadata.distributions())
    digest.update("\0".join([sys.version, *installed]).encode())
    return digest.hexdigest()


def key(root: Path, relpath: str) -> str:
    """The cache key of one chapter (hex SHA-256) for the inputs listed in the module docstring."""
    digest = hashlib.sha256(_shared_digest(root).encode())
    text = (root / relpath).read_bytes()
    digest.update(relpath.encode() + b"\0" + text)
    if renders_runbook(text.decode("utf-8")):
        digest.update((root / RUNBOOK).read_bytes())
    return digest.hexdigest()


def load(chapter_key: str) -> list[tuple[str, str, str | None]] | None:
    """The rows (runner, status, reason) of a passing run with this key, or None (also when disabled)."""
    path = FOLDER / f"{chapter_key}.json"
    if not enabled() or not path.exists():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    return [tuple(row) for row in data["rows"]]


def store(chapter_key: str, relpath: str, rows: list[tuple[str, str, str | None]]) -> None:
    """Remember a chapter run in which no block failed, under the key computed before it ran."""
    FOLDER.mkdir(parents=True, exist_ok=True)
    path = FOLDER / f"{chapter_key}.json"
    path.write_text(json.dumps({"chapter": relpath, "rows": rows}), encoding="utf-8")
