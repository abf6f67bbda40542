"""SVG labels held in ``foreignObject`` (HTML inside SVG) rewritten as SVG ``<text>`` for print and e-readers.

WeasyPrint and many e-readers draw nothing for ``foreignObject``, so every such label would vanish. A label that
is only text (with line breaks) becomes centred ``<text>`` lines in the same box; anything else (an image, a
table, a form) cannot be converted and is reported. A ``foreignObject`` inside ``<switch>`` next to a fallback
is left alone: readers draw the fallback.
"""

from __future__ import annotations

import re

from lxml import etree

SVG_NS = "http://www.w3.org/2000/svg"
BLOCKS = {"div", "p", "br", "li", "h1", "h2", "h3", "h4", "h5", "h6", "tr"}
NOT_TEXT = {"img", "svg", "table", "input", "video", "audio", "canvas", "iframe", "object", "embed", "math"}
FONT_SIZE = re.compile(r"font-size:\s*([\d.]+)px")
DEFAULT_SIZE = 14.0  # px, when the label sets none


class LabelError(ValueError):
    """A foreignObject that cannot become text; the message says what it holds."""


def _local(el) -> str:
    return etree.QName(el).localname.lower() if isinstance(el.tag, str) else ""


def _lines(node) -> list[str]:
    """The label's text, one string per line (block elements and <br> end a line)."""
    lines, current = [], []

    def walk(el):
        if _local(el) in NOT_TEXT:
            raise LabelError(f"a foreignObject holds <{_local(el)}>, which cannot be drawn as SVG text")
        if _local(el) in BLOCKS and current:
            lines.append("".join(current))
            current.clear()
        current.append(el.text or "")
        for child in el:
            walk(child)
            current.append(child.tail or "")

    for child in node:
        walk(child)
        current.append(child.tail or "")
    lines.append("".join(current))
    return [" ".join(line.split()) for line in lines if line.strip()]


def _size(node) -> float:
    for el in node.iter():
        if isinstance(el.tag, str) and (match := FONT_SIZE.search(el.get("style") or "")):
            return float(match.group(1))
    return DEFAULT_SIZE


def _text_for(node, namespaced: bool = True) -> etree._Element:
    """A <text> element centred in the foreignObject's box, one <tspan> per line.

    namespaced: SVG-namespaced tags for a parsed SVG file; plain tags for an SVG inside an lxml.html tree.
    """
    ns = f"{{{SVG_NS}}}" if namespaced else ""
    x, y = float(node.get("x", 0)), float(node.get("y", 0))
    width, height = float(node.get("width", 0)), float(node.get("height", 0))
    lines, size = _lines(node), _size(node)
    text = node.makeelement(f"{ns}text", {"text-anchor": "middle", "font-size": f"{size:g}"})
    text.set("font-family", "Noto Sans, sans-serif")
    top = y + height / 2 - (len(lines) - 1) * size * 0.6 + size * 0.35  # centre the block of lines
    for i, line in enumerate(lines):
        span = etree.SubElement(text, f"{ns}tspan", {"x": f"{x + width / 2:g}"})
        span.set("y", f"{top + i * size * 1.2:g}")
        span.text = line
    text.tail = node.tail
    return text


def _foreign_objects(root) -> list:
    return [el for el in root.iter() if _local(el) == "foreignobject" and _local(el.getparent()) != "switch"]


def convert(svg: bytes) -> bytes:
    """The SVG with every convertible foreignObject turned into <text>; unchanged when it has none.

    Raises LabelError naming what a label holds when it is not text, and ValueError when the SVG does not parse.
    """
    if b"foreignObject" not in svg and b"foreignobject" not in svg:
        return svg
    try:
        root = etree.fromstring(svg, parser=etree.XMLParser(resolve_entities=False, no_network=True))
    except etree.XMLSyntaxError as exc:
        raise ValueError(f"the SVG does not parse as XML: {exc}") from exc
    found = _foreign_objects(root)
    for node in found:
        node.getparent().replace(node, _text_for(node))
    return etree.tostring(root, encoding="utf-8", xml_declaration=False) if found else svg


def problem(svg: bytes) -> str | None:
    """Why the SVG's labels cannot be printed (None when they can, or it has no foreignObject)."""
    try:
        convert(svg)
    except ValueError as exc:
        return str(exc)
    return None


def convert_inline(article) -> list[str]:
    """Rewrite, in place, the foreignObject labels of every inline <svg> of an lxml.html article.

    Returns the problems of the inline SVGs that could not be converted (they are left as they were).
    """
    problems = []
    for svg in list(article.iter("svg")):
        markup = etree.tostring(svg, encoding="unicode")
        if "foreignobject" not in markup.lower():
            continue
        for node in _foreign_objects(svg):
            try:
                node.getparent().replace(node, _text_for(node, namespaced=False))
            except LabelError as exc:
                problems.append(str(exc))
    return problems
