"""What the writers need to know about the book, independent of MkDocs (saved as `site/options.json`)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path


@dataclass
class Options:
    """What the writers need, independent of MkDocs (stored in book.json's companion options.json)."""

    title: str
    author: str
    subtitle: str
    language: str
    identifier: str
    keywords: list[str]
    output_name: str
    formats: list[str]
    site_url: str
    repo_url: str
    copyright: str
    edition: str
    epoch: int
    pdf_workers: int = 0
    pdf_variant: str = ""
    cache_dir: str = ""

    def to_dict(self) -> dict:
        """Plain dict for JSON."""
        return asdict(self)


def save(options: Options, site_dir: Path) -> None:
    """Write ``options.json`` into the site so the command line can rerun the writers."""
    saved = {k: v for k, v in options.to_dict().items() if k != "cache_dir"}  # a local path, not part of the book
    Path(site_dir, "options.json").write_text(json.dumps(saved, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def load(site_dir: Path) -> Options:
    """Read the options saved by save."""
    return Options(**json.loads(Path(site_dir, "options.json").read_text(encoding="utf-8")))
