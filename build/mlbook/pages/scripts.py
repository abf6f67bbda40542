"""The Scripts appendix, a page the plugin writes itself (no file in book/): every script, its purpose, its chapters."""

from __future__ import annotations

import ast
import posixpath
import re
from pathlib import Path

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


# Characters that Markdown, or one of the site's extensions, may read as syntax inside a table cell:
# HTML (&, <, >), emphasis (*, _), code (`), links ([, ]), the cell separator (|), escapes (\\), arithmatex
# math ($), emoji (:), mark/caret/tilde (=, ^, ~) and attribute lists ({, }).  Each becomes a numeric
# character reference, which every parser passes through as the literal character.
MARKDOWN_SPECIAL = re.compile(r"[&<>*_`\[\]|\\$:=^~{}]")


def escape_cell(text: str) -> str:
    """``text`` as literal Markdown for one table cell: every special character as ``&#N;`` (see MARKDOWN_SPECIAL)."""
    return MARKDOWN_SPECIAL.sub(lambda m: f"&#{ord(m.group())};", text)


def served_files(root: Path) -> list[Path]:
    """Every file under scripts/ that the site serves: all but Markdown (repository documentation) and bytecode."""
    base = Path(root) / "scripts"
    return [
        p
        for p in sorted(p for p in base.rglob("*") if p.is_file())
        if "__pycache__" not in p.relative_to(root).as_posix() and p.suffix not in (".pyc", ".md")
    ]


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
            f"[{escape_cell(titles.get(c, c))}]({posixpath.relpath(c, posixpath.dirname(page) or '.')})"
            for c in used.get(rel, [])
        )
        text = escape_cell(purpose(path))
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
