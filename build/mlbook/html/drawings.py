"""What the site would draw in the browser, drawn at build time: TeX math, Mermaid, SVG labels checked for print.

Runs on each built page (the plugin's page-content event): math becomes MathML, Mermaid fences become SVG, and
every SVG the page shows (inline or as an image) is checked so its labels can print. A construct that cannot
be drawn is reported as ``book/<path>.md:<line>: <kind>: <detail>`` and the build fails; nothing prints as
source silently.
"""

from __future__ import annotations

import re
from pathlib import Path

from lxml import html as lhtml

from ..diagnostics import Reporter, line_of
from . import links, mermaid, svglabels, tex

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
    for diagram, error in diagram_errors:
        first = next((ln.strip() for ln in diagram.splitlines() if ln.strip()), "mermaid")
        reporter.report(
            source,
            line_of(text, first, "```mermaid"),
            "diagram failed",
            f"Mermaid could not draw this diagram: {error}",
        )
    _check_svgs(page_html, page_url, text, source, Path(docs_dir), reporter)
    return page_html


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
