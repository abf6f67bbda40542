"""What the site would draw in the browser, drawn at build time: TeX math, Mermaid, SVG labels checked for print.

Runs on each built page (the plugin's page-content event): math becomes MathML, Mermaid fences become SVG, and
every SVG the page shows (inline or as an image) is checked so its labels can print. A construct that cannot
be drawn is reported as ``book/<path>.md:<line>: <kind>: <detail>`` and the build fails; nothing prints as
source silently.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

from lxml import html as lhtml

from ..diagnostics import Reporter, line_of
from . import links, mermaid, svglabels, tex

MERMAID_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<mark>`{3,}|~{3,})[ \t]*\.?mermaid\b")
IMG_SRC = re.compile(r'<img\b[^>]*\bsrc="([^"]+\.svg)"', re.I)


def prepare_page(
    page_html: str, page_url: str, text: str, source: str, docs_dir: Path, cache_dir: Path | None, reporter: Reporter
) -> str:
    """The page's HTML with math and diagrams drawn; each problem reported at its line of text (the Markdown)."""
    page_html, math_errors = tex.page_to_mathml(page_html)
    for formula, error in math_errors:
        reporter.report(
            source,
            line_of(text, formula, formula.split("\n")[0]),
            "math not printable",
            f"{error}; write it with commands latex2mathml supports",
        )
    page_html, diagram_errors = mermaid.page_diagrams(page_html, cache_dir)
    fences, after = mermaid_fences(text), 0
    for diagram, error in diagram_errors:
        # The fence holding this diagram, after the one the previous failure was found at: two diagrams of a page
        # often begin alike ('graph LR'), so the first line alone would name the wrong one.
        found = next((k for k in range(after, len(fences)) if fences[k][1] == textwrap.dedent(diagram).strip()), None)
        if found is None:  # not written in the chapter itself (an included file): its first line, or the fence
            first = next((ln.strip() for ln in diagram.splitlines() if ln.strip()), "mermaid")
            line = line_of(text, first, "```mermaid")
        else:
            line, after = fences[found][0], found + 1
        reporter.report(source, line, "diagram failed", f"Mermaid could not draw this diagram: {error}")
    _check_svgs(page_html, page_url, text, source, Path(docs_dir), reporter)
    return page_html


def mermaid_fences(text: str) -> list[tuple[int, str]]:
    """(line of the opening fence, the diagram's source dedented and stripped) of each mermaid fence of text."""
    lines, found = text.split("\n"), []
    i = 0
    while i < len(lines):
        match = MERMAID_FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        mark, indent, body = match["mark"], len(match["indent"]), []
        i += 1
        while i < len(lines) and not re.fullmatch(rf"\s*{re.escape(mark[0])}{{{len(mark)},}}\s*", lines[i]):
            body.append(lines[i][indent:] if not lines[i][:indent].strip() else lines[i].lstrip())
            i += 1
        found.append((i - len(body), textwrap.dedent("\n".join(body)).strip()))
        i += 1
    return found


def _check_svgs(page_html: str, page_url: str, text: str, source: str, docs_dir: Path, reporter: Reporter) -> None:
    """Report each SVG (inline or an image file under docs_dir) whose foreignObject labels cannot print."""
    if "<svg" in page_html and "foreignobject" in page_html.lower():
        for problem in svglabels.convert_inline(lhtml.fragment_fromstring(page_html, create_parent="div")):
            reporter.report(source, line_of(text, "<svg"), "svg labels not printable", _hint(problem))
    for src in sorted(set(IMG_SRC.findall(page_html))):
        target = links.resolve(page_url, src)
        path = docs_dir / target.url
        if target.kind != "file" or not path.is_file():
            continue
        problem = svglabels.problem(path.read_bytes())
        if problem:
            name = src.rsplit("/", 1)[-1]
            reporter.report(source, line_of(text, name), "svg labels not printable", f"{name}: {_hint(problem)}")


def _hint(problem: str) -> str:
    return f"{problem}; the PDF and most e-readers would show the drawing without it (export labels as SVG text)"
