"""The one-screen summary printed at the end of a build: chapters, words, pages, scripts, images, warnings."""

from __future__ import annotations

import re
from pathlib import Path

from .book import Book
from .markdown.fences import fenced

WORD = re.compile(r"[A-Za-z0-9][\w'’-]*")
IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".svg", ".gif", ".webp"}


def prose_words(markdown: str) -> int:
    """Words of a chapter outside fenced code blocks and table rows."""
    lines = markdown.split("\n")
    return sum(
        len(WORD.findall(line))
        for line, code in zip(lines, fenced(lines), strict=True)
        if not code and not line.lstrip().startswith("|")
    )


def count_images(site: Path) -> int:
    """The book's own images and figures in the built site, not the theme's assets."""
    return sum(
        1 for p in site.rglob("*") if p.suffix.lower() in IMAGE_SUFFIXES and p.relative_to(site).parts[0] != "assets"
    )


def summary(book: Book, sources: dict[str, str], results: dict, scripts: int, images: int, warnings: int) -> str:
    """Summary lines of a build: what the book contains and what was written."""
    words = sum(prose_words(sources.get(c.src_uri, "")) for c in book.pages())
    chapters = sum(len(p.chapters) for p in book.parts)
    lines = [
        f"mlbook: {len(book.parts)} parts, {chapters} chapters, {len(book.pages())} pages of site content",
        f"mlbook: {words:,} words of prose, {scripts} scripts, {images} images, {warnings} warnings",
    ]
    for r in results.values():
        if r["skipped"]:
            lines.append(f"mlbook: {r['title']} not written: {r['skipped']}")
        else:
            lines.append(
                f"mlbook: {r['title']} {r['count']} {r['unit']}, {r['bytes'] / 1e6:.1f} MB, {r['seconds']:.1f} s"
            )
    return "\n".join(lines)
