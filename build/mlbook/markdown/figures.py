"""`/// figure | NAME` ... `///` blocks, replaced by the figure (drawn by data/figures) with alt text and caption."""

from __future__ import annotations

import posixpath
import re

from ..data.figures import FIGURES
from ..diagnostics import Reporter, line_of
from .fences import fenced

FIGURE = re.compile(r"^///\s*figure\s*\|\s*(?P<name>[\w-]+)\s*$")


def wanted(texts: list[str]) -> set[str]:
    """Names of the known figures that the given chapter sources use."""
    names = {m["name"] for text in texts for line in text.splitlines() if (m := FIGURE.match(line))}
    return names & set(FIGURES)


def figure_lines(name: str, page_src_uri: str) -> list[str]:
    """Markdown lines (md_in_html) showing the figure with its alt text and caption, linked from the page."""
    figure = FIGURES[name]
    src = posixpath.relpath(f"figures/{name}.svg", posixpath.dirname(page_src_uri) or ".")
    return [
        '<figure markdown="span">',
        f"  ![{figure.alt}]({src})",
        f"  <figcaption>Figure: {figure.caption}</figcaption>",
        "</figure>",
    ]


def expand(markdown: str, text: str, src_uri: str, source: str, reporter: Reporter) -> str:
    """Replace each figure block of markdown; an unknown name is reported at its line of text (the raw source)."""
    lines, out, i = markdown.split("\n"), [], 0
    in_code = fenced(lines)
    while i < len(lines):
        match = None if in_code[i] else FIGURE.match(lines[i])
        if not match:
            out.append(lines[i])
            i += 1
            continue
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == "///"), i)
        if match["name"] in FIGURES:
            out += ["", *figure_lines(match["name"], src_uri), ""]
        else:
            known = ", ".join(sorted(FIGURES))
            reporter.report(
                source,
                line_of(text, lines[i]),
                "unknown figure",
                f"'{match['name']}' is not a figure of build/mlbook/data/figures/; known: {known}",
            )
        i = end + 1
    return "\n".join(out)
