"""Mermaid diagrams drawn at build time into SVG with text labels, the same drawing on the site, PDF and EPUB.

Library: mermaidx, which runs the official Mermaid JavaScript library (its bundled copy) in an embedded QuickJS
engine: no browser, Node.js or network. A diagram takes seconds to draw, so drawings are cached by a hash of
their source. Labels are drawn as SVG ``<text>`` (``htmlLabels: false``): WeasyPrint and many e-readers do not
draw ``foreignObject``.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
from pathlib import Path

# superfences' fence_code_format for a `mermaid` custom fence, as Material's documentation configures it.
FENCE = re.compile(r'<pre class="mermaid"><code>(.*?)</code></pre>', re.S)
CONFIG = {"htmlLabels": False, "flowchart": {"htmlLabels": False}, "theme": "neutral", "deterministicIds": True}
RENDER_ID = "my-svg"  # the id mermaidx gives every drawing; each drawing on a page gets its own instead


class DiagramError(ValueError):
    """A diagram Mermaid could not draw; the message is Mermaid's own (its first lines)."""


def _version() -> str:
    from importlib.metadata import version

    return version("mermaidx")


def draw(source: str, cache_dir: Path | None) -> str:
    """The SVG of one Mermaid diagram, from the cache when the same source was drawn before.

    Raises DiagramError with Mermaid's message when the source does not parse.
    """
    key = hashlib.sha256(json.dumps([source, CONFIG, _version()]).encode()).hexdigest()[:20]
    cached = Path(cache_dir) / f"{key}.svg" if cache_dir else None
    if cached is not None and cached.is_file():
        return cached.read_text(encoding="utf-8")
    import mermaidx

    try:
        svg = mermaidx.render(source, config=CONFIG).svg()
    except RuntimeError as exc:
        raise DiagramError(_message(str(exc))) from exc
    if cached is not None:
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_suffix(".tmp")
        tmp.write_text(svg, encoding="utf-8")
        tmp.replace(cached)
    return svg


def _message(error: str) -> str:
    """Mermaid's error in one line, without Mermaid's line number, which the diagnostic does not use.

    Mermaid counts the lines of its own input (a flowchart's error on the diagram's second line says 'line 4'), so
    the diagnostic names the fence's line instead. A parse error becomes "parse error after '<the text before
    the error>'"; any other error keeps its first two lines.
    """
    lines = [ln for ln in error.removeprefix("Mermaid rendering failed: ").splitlines() if ln.strip()]
    if len(lines) >= 3 and re.match(r"(Error: )?Parse error on line \d+:$", lines[0]) and lines[2].endswith("^"):
        before = lines[1][: len(lines[2]) - 1].removeprefix("...").strip()
        return f"parse error after '{before}'"[:300]
    return " ".join(lines[:2])[:300]


def page_diagrams(page_html: str, cache_dir: Path | None) -> tuple[str, list[tuple[str, str]]]:
    """Replace every Mermaid fence of a built page by ``<figure class="diagram">`` holding its SVG.

    Returns (html, [(diagram source, error), ...]); a diagram that fails stays as its fence, listed for a
    diagnostic. Ids inside each drawing are made unique on the page (``mermaid-<n>-...``).
    """
    errors: list[tuple[str, str]] = []
    count = 0

    def one(match: re.Match) -> str:
        nonlocal count
        source = html.unescape(match.group(1))
        try:
            svg = draw(source, cache_dir)
        except DiagramError as exc:
            errors.append((source, str(exc)))
            return match.group(0)
        count += 1
        svg = svg.replace(RENDER_ID, f"mermaid-{count}")
        # The source rides along for the Markdown export, which shows a diagram as its Mermaid fence.
        return f'<figure class="diagram" data-source="{html.escape(source, quote=True)}">{svg}</figure>'

    return FENCE.sub(one, page_html), errors
