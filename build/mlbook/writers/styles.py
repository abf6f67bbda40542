"""The stylesheets of the PDF and the EPUB: our CSS files followed by the code colours."""

from __future__ import annotations

from pathlib import Path

from ..html import codestyle

STYLES = Path(__file__).parent.parent / "styles"


def pdf_css() -> str:
    """The print CSS: styles/pdf.css followed by the Pygments colours of code blocks."""
    return (STYLES / "pdf.css").read_text(encoding="utf-8") + "\n" + codestyle.css()


def epub_css() -> bytes:
    """The EPUB CSS: styles/epub.css followed by the Pygments colours of code blocks (the same style as the PDF)."""
    return ((STYLES / "epub.css").read_text(encoding="utf-8") + "\n" + codestyle.css() + "\n").encode("utf-8")
