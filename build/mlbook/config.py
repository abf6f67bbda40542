"""Typed options of the mlbook plugin, with defaults and checks (MkDocs rejects unknown keys)."""

from __future__ import annotations

from mkdocs.config import base
from mkdocs.config import config_options as c

from .writers import FORMATS


class PluginConfig(base.Config):
    """Options under ``plugins: - mlbook:`` in mkdocs.yml."""

    enabled = c.Type(bool, default=True)
    """Write the PDF and EPUB after the site build. `make serve` turns this off for fast previews."""
    formats = c.ListOfItems(c.Choice(tuple(FORMATS)), default=[n for n, f in FORMATS.items() if f.default])
    """Which editions to write (the names of writers.FORMATS); one left out is offered nowhere on the site."""
    output_name = c.Type(str, default="ml-engineering-book")
    """File name stem of the editions, written to `site/downloads/<output_name>.pdf|.epub`."""
    subtitle = c.Type(str, default="Training and serving large models at scale")
    """Subtitle on the covers."""
    identifier = c.Type(str, default="urn:uuid:6c1f3c52-8a8e-4b7e-9d3a-5b2f0c7e4a11")
    """The EPUB's fixed unique identifier: the same for every build of the book."""
    downloads_page = c.Type(str, default="downloads.md")
    """Generated site-only page listing the editions with their sizes (name it in nav)."""
    scripts_page = c.Type(str, default="scripts.md")
    """Generated appendix listing every script with its purpose and the chapters that show it (name it in nav)."""
    changes_page = c.Type(str, default="changes.md")
    """Generated "What changed" page: per chapter, the book/data/changes.yaml entries since the previous tag."""
    changes_per_chapter = c.Type(int, default=5)
    """At most this many changes per chapter on the "What changed" page; the rest are counted."""
    pdf_variant = c.Choice(("", "pdf/ua-1"), default="")
    """"pdf/ua-1" writes a tagged, accessible PDF (rendered as one document, so slower: see make bench)."""
    pdf_workers = c.Type(int, default=0)
    """Worker processes that render the PDF in chunks; 0 = one per CPU (at most 4), 1 = one document in-process."""
    keywords = c.ListOfItems(c.Type(str), default=["machine learning", "LLM", "GPU", "distributed training"])
    """Keywords written into the PDF and EPUB metadata."""
