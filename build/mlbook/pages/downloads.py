"""The Downloads page, written by the plugin (no file in book/), and the editions' sizes filled in after writing."""

from __future__ import annotations

import posixpath
from pathlib import Path

from ..writers.registry import Format, Output

SIZE_SPAN = '<span class="mlbook-size" data-format="{key}"></span>'


def downloads(offered: list[tuple[Format, Output]], page: str = "downloads.md") -> str:
    """Markdown of the Downloads page: one row per offered output; sizes are filled in after writing."""
    rows = []
    for fmt, output in offered:
        rel = posixpath.relpath(output.path, posixpath.dirname(page) or ".")
        name = posixpath.basename(output.path)
        rows.append(f"| {fmt.title} | [{name}]({rel}) | {SIZE_SPAN.format(key=output.key)} | {fmt.use} |")
    table = ["| Edition | File | Size | For |", "| --- | --- | --- | --- |", *rows, ""] if rows else []
    return "\n".join(
        [
            "# Downloads",
            "",
            "The whole book as one file, built from the same sources as this website at the same time.",
            "",
            *table,
            "The scripts the book shows are listed, with download links, in the [scripts appendix](scripts.md).",
            "",
        ]
    )


def human(size: int) -> str:
    """A file size for readers: MB (10^6 bytes) with one decimal from 1 MB, else whole kB (10^3 bytes)."""
    return f"{size / 1e6:.1f} MB" if size >= 1e6 else f"{max(1, round(size / 1e3))} kB"


def fill_sizes(site_dir: Path, sizes: dict[str, int]) -> None:
    """Write the outputs' sizes (output key -> bytes) into every page's size placeholders."""
    for page in Path(site_dir).rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        new = text
        if 'class="mlbook-size"' not in text:
            continue
        for key, size in sizes.items():
            new = new.replace(
                SIZE_SPAN.format(key=key), f'<span class="mlbook-size" data-format="{key}">{human(size)}</span>'
            )
        if new != text:
            page.write_text(new, encoding="utf-8")
