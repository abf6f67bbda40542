"""Pages the plugin writes itself (no file in book/): the Downloads page and the Scripts index."""

from __future__ import annotations

import ast
import posixpath
import re
from pathlib import Path

SIZE_SPAN = '<span class="mlbook-size" data-format="{fmt}"></span>'
# A chapter uses a script when it includes it, links it, or names its path (for example in a command).
MENTION = re.compile(r"(?<![\w/.-])(?:\.\./)*(?P<path>scripts/[\w/.-]+\.(?:py|sh|slurm|yaml))")


def purpose(path: Path) -> str:
    """A script's one-line purpose: the first line of a Python module docstring, else its first comment."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".py":
        try:
            doc = ast.get_docstring(ast.parse(text))
        except SyntaxError:
            doc = None
        if doc:
            return doc.strip().splitlines()[0].strip()
    for line in text.splitlines():
        stripped = line.strip()
        if line.startswith("#!") or "SPDX-License-Identifier" in line or stripped.startswith("#SBATCH"):
            continue
        if stripped.startswith("#") and stripped.strip("# -=").strip():
            return stripped.lstrip("#").strip()
    return ""


def script_files(root: Path) -> list[Path]:
    """The reader-facing scripts: every file under scripts/ except documentation and bytecode."""
    base = Path(root) / "scripts"
    skip = {".md", ".pyc"}
    return sorted(
        p
        for p in base.rglob("*")
        if p.is_file() and p.suffix not in skip and "__pycache__" not in p.parts and p.name != "LICENSE"
    )


def uses(docs_dir: Path) -> dict[str, list[str]]:
    """Map of script path (``scripts/...``) to the chapters (src_uri) that include, link or name it."""
    found: dict[str, list[str]] = {}
    for md in sorted(Path(docs_dir).rglob("*.md")):
        src_uri = md.relative_to(docs_dir).as_posix()
        for match in MENTION.finditer(md.read_text(encoding="utf-8", errors="replace")):
            chapters = found.setdefault(match["path"], [])
            if src_uri not in chapters:
                chapters.append(src_uri)
    return found


def scripts_index(root: Path, docs_dir: Path, titles: dict[str, str], page: str = "scripts.md") -> str:
    """Markdown of the Scripts index: every script, its purpose, and links to the chapters that show it."""
    used = uses(docs_dir)
    rows = []
    for path in script_files(root):
        rel = path.relative_to(root).as_posix()
        link = posixpath.relpath(rel, posixpath.dirname(page) or ".")
        shown = ", ".join(
            f"[{titles.get(c, c)}]({posixpath.relpath(c, posixpath.dirname(page) or '.')})" for c in used.get(rel, [])
        )
        text = purpose(path).replace("|", "\\|")
        rows.append(f"| [`{rel.removeprefix('scripts/')}`]({link}) | {text} | {shown or '—'} |")
    return "\n".join(
        [
            "# Appendix: Scripts",
            "",
            "Every script in the book's `scripts/` folder, with its purpose and the chapters that show it.",
            "Each link downloads the exact file that the book's tests run; read its `--help` before you run it.",
            "The scripts are licensed under the Apache License 2.0.",
            "",
            "| Script | Purpose | Shown in |",
            "| --- | --- | --- |",
            *rows,
            "",
        ]
    )


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
