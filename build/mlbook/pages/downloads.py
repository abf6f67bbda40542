"""The Downloads page, written by the plugin (no file in book/), and the editions' sizes filled in after writing."""

from __future__ import annotations

import posixpath
from pathlib import Path

SIZE_SPAN = '<span class="mlbook-size" data-format="{fmt}"></span>'


def downloads(output_name: str, formats: list[str], page: str = "downloads.md") -> str:
    """Markdown of the Downloads page; the sizes are filled in after the editions are written."""
    names = {
        "pdf": ("PDF", "for reading offline and printing (A4)"),
        "epub": ("EPUB", "for e-readers, phones and tablets"),
    }
    rows = []
    for fmt in formats:
        label, use = names[fmt]
        rel = posixpath.relpath(f"downloads/{output_name}.{fmt}", posixpath.dirname(page) or ".")
        rows.append(f"| {label} | [{output_name}.{fmt}]({rel}) | {SIZE_SPAN.format(fmt=fmt)} | {use} |")
    return "\n".join(
        [
            "# Downloads",
            "",
            "The whole book as one file, built from the same sources as this website at the same time.",
            "",
            "| Edition | File | Size | For |",
            "| --- | --- | --- | --- |",
            *rows,
            "",
            "The scripts the book shows are listed, with download links, in the [scripts appendix](scripts.md).",
            "",
        ]
    )


def fill_sizes(site_dir: Path, sizes: dict[str, int]) -> None:
    """Write the editions' sizes (bytes, shown in MB = 10^6 bytes) into every page's size placeholders."""
    for page in Path(site_dir).rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        new = text
        for fmt, size in sizes.items():
            new = new.replace(
                SIZE_SPAN.format(fmt=fmt), f'<span class="mlbook-size" data-format="{fmt}">{size / 1e6:.1f} MB</span>'
            )
        if new != text:
            page.write_text(new, encoding="utf-8")
